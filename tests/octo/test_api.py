"""OCTO's core at /octo/: keys, supplier, products, availability and the booking journey."""

import datetime as dt

from django.test import Client
from django.utils import timezone

from events.models import EventDate
from octo.keys import revoke_api_key
from octo.models import ApiKey, Booking
from orders.models import Channel, Order, OrderStatus
from orders.tokens import sign_cancel_link, sign_tickets_link
from tests.factories import MuseumDayFactory, SpecialEventFactory
from tests.octo.conftest import B1, later, octo_client, reserve_body, slot_id, uid


def test_a_journey_reserve_extend_confirm_get_list_cancel(octo, timed_day):
    day = timed_day.date
    held = octo.post(
        "/octo/bookings",
        reserve_body(day, "adult", "child", resellerReference="R-1"),
        format="json",
    )
    assert held.status_code == 200, held.json()
    booking = held.json()
    assert booking["status"] == "ON_HOLD"
    assert booking["utcExpiresAt"]
    order = Order.objects.get()
    assert (order.status, order.channel) == (OrderStatus.HELD, Channel.ON_ACCOUNT)
    assert order.slot.sold == 2

    extended = octo.post(f"/octo/bookings/{B1}/extend", {"expirationMinutes": 30}, format="json")
    assert extended.status_code == 200
    assert extended.json()["utcExpiresAt"] > booking["utcExpiresAt"]

    confirmed = octo.post(
        f"/octo/bookings/{B1}/confirm",
        {"contact": {"fullName": "Ada", "emailAddress": "ada@example.com"}},
        format="json",
    ).json()
    assert confirmed["status"] == "CONFIRMED"
    assert confirmed["voucher"]["deliveryOptions"][0]["deliveryValue"] == order.confirmation_code
    formats = [
        [option["deliveryFormat"] for option in unit["ticket"]["deliveryOptions"]]
        for unit in confirmed["unitItems"]
    ]
    assert formats == [["QRCODE", "PDF_URL"]] * 2
    order.refresh_from_db()
    assert (order.status, order.email, order.name) == (
        OrderStatus.CONFIRMED,
        "ada@example.com",
        "Ada",
    )

    assert octo.get(f"/octo/bookings/{B1}").json()["status"] == "CONFIRMED"
    listed = octo.get("/octo/bookings", {"resellerReference": "R-1"}).json()
    assert [item["uuid"] for item in listed] == [B1]

    cancelled = octo.delete(f"/octo/bookings/{B1}").json()
    assert cancelled["status"] == "CANCELLED"
    assert cancelled["cancellation"]["refund"] == "FULL"
    order.slot.refresh_from_db()
    assert order.slot.sold == 0


def test_the_same_uuid_twice_gives_one_booking(octo, timed_day):
    first = octo.post("/octo/bookings", reserve_body(timed_day.date), format="json").json()
    again = octo.post("/octo/bookings", reserve_body(timed_day.date), format="json").json()
    assert first["id"] == again["id"]
    assert Order.objects.count() == Booking.objects.count() == 1


def test_errors_in_octos_shape(octo, timed_day):
    day = timed_day.date
    wrong = {
        "INVALID_PRODUCT_ID": reserve_body(day, productId="nope"),
        "INVALID_OPTION_ID": reserve_body(day, optionId="nope"),
        "INVALID_UNIT_ID": reserve_body(day, "dragon"),
        "INVALID_AVAILABILITY_ID": reserve_body(day, hour=9),
        "UNPROCESSABLE_ENTITY": reserve_body(day, unitItems=[]),
    }
    for error, body in wrong.items():
        response = octo.post("/octo/bookings", body, format="json")
        assert response.status_code == 400, error
        assert response.json()["error"] == error
    unknown = octo.get("/octo/bookings/nobody")
    assert (unknown.status_code, unknown.json()["error"]) == (400, "INVALID_BOOKING_UUID")
    assert unknown.json()["uuid"] == "nobody"


def test_a_sold_out_slot_is_unprocessable(octo, timed_day):
    octo.post("/octo/bookings", reserve_body(timed_day.date, *["adult"] * 4), format="json")
    refused = octo.post(
        "/octo/bookings", reserve_body(timed_day.date, uuid=uid("b-2")), format="json"
    ).json()
    assert refused["error"] == "UNPROCESSABLE_ENTITY"


def test_a_revoked_or_wrong_key_is_401(partner, timed_day):
    client = octo_client(partner)
    assert client.get("/octo/supplier").status_code == 200
    revoke_api_key(key_id=ApiKey.objects.get().pk)
    refused = client.get("/octo/supplier")
    assert refused.status_code == 401
    assert refused.json()["error"] == "UNAUTHORIZED"
    client.credentials(HTTP_AUTHORIZATION="Bearer octo_wrong")
    assert client.get("/octo/supplier").status_code == 401
    client.credentials()
    assert client.get("/octo/supplier").json()["error"] == "UNAUTHORIZED"


def test_the_key_shows_its_last_use(octo):
    assert ApiKey.objects.get().last_used_at is None
    octo.get("/octo/supplier")
    assert ApiKey.objects.get().last_used_at is not None


def test_products_and_availability(octo, timed_day):
    event = SpecialEventFactory(dates=[later(5)], capacity=10)
    EventDate.objects.filter(event=event).update(capacity=10)  # as the event's service copies it
    products = octo.get("/octo/products").json()
    assert [product["id"] for product in products] == ["general", str(event.pk)]
    general = products[0]
    assert general["availabilityType"] == "START_TIME"
    assert general["options"][0]["availabilityLocalStartTimes"] == ["10:00", "10:30", "11:00"]
    assert {unit["id"] for unit in general["options"][0]["units"]} >= {"adult", "child"}

    octo.post(
        "/octo/bookings", reserve_body(timed_day.date, "adult", "adult", "adult"), format="json"
    )
    slots = octo.post(
        "/octo/availability",
        {
            "productId": "general",
            "optionId": "DEFAULT",
            "localDateStart": timed_day.date.isoformat(),
            "localDateEnd": timed_day.date.isoformat(),
        },
        format="json",
    ).json()
    assert [(slot["id"], slot["status"], slot["vacancies"]) for slot in slots] == [
        (slot_id(timed_day.date, 10), "LIMITED", 1),
        (slot_id(timed_day.date, 10, 30), "AVAILABLE", 4),
        (slot_id(timed_day.date, 11), "AVAILABLE", 4),
    ]
    calendar = octo.post(
        "/octo/availability/calendar",
        {
            "productId": "general",
            "optionId": "DEFAULT",
            "localDateStart": timezone.localdate().isoformat(),
            "localDateEnd": later(10).isoformat(),
        },
        format="json",
    ).json()
    assert [(day["localDate"], day["vacancies"]) for day in calendar] == [
        (timed_day.date.isoformat(), 9)
    ]
    event_slots = octo.post(
        "/octo/availability",
        {
            "productId": str(event.pk),
            "optionId": "DEFAULT",
            "localDateStart": later(5).isoformat(),
            "localDateEnd": later(5).isoformat(),
        },
        format="json",
    ).json()
    assert [(slot["vacancies"], slot["capacity"]) for slot in event_slots] == [(10, 10)]


def test_an_untimed_day_is_opening_hours(octo):
    MuseumDayFactory(date=later(), opens_at=dt.time(9), closes_at=dt.time(17))
    product = octo.get("/octo/products/general").json()
    assert product["availabilityType"] == "OPENING_HOURS"
    slots = octo.post(
        "/octo/availability",
        {"productId": "general", "optionId": "DEFAULT", "availabilityIds": [slot_id(later(), 0)]},
        format="json",
    ).json()
    assert slots[0]["openingHours"] == [{"from": "09:00", "to": "17:00"}]
    assert slots[0]["allDay"] is True


def test_a_reservation_without_uuid_gets_one(octo, timed_day):
    body = reserve_body(timed_day.date)
    del body["uuid"]
    booking = octo.post("/octo/bookings", body, format="json").json()
    assert booking["status"] == "ON_HOLD"
    assert octo.get(f"/octo/bookings/{booking['uuid']}").json()["id"] == booking["id"]


def test_a_held_booking_moves_to_another_slot(octo, timed_day):
    octo.post("/octo/bookings", reserve_body(timed_day.date, "adult", "adult"), format="json")
    moved = octo.patch(
        f"/octo/bookings/{B1}", {"availabilityId": slot_id(timed_day.date, 11)}, format="json"
    ).json()
    assert moved["availabilityId"] == slot_id(timed_day.date, 11)
    sold = dict(timed_day.slots.values_list("entry_time", "sold"))
    assert sold == {dt.time(10): 0, dt.time(10, 30): 0, dt.time(11): 2}


def test_titles_in_the_language_asked(octo):
    event = SpecialEventFactory(dates=[later(5)], name="Night of lights", name_de="Lichternacht")
    product = octo.get(f"/octo/products/{event.pk}", HTTP_ACCEPT_LANGUAGE="de").json()
    assert product["title"] == "Lichternacht"
    assert octo.get(f"/octo/products/{event.pk}").json()["title"] == "Night of lights"


def test_capabilities_are_listed_and_echoed(octo):
    listed = octo.get("/octo/capabilities", HTTP_OCTO_CAPABILITIES="octo/pricing, octo/nope")
    assert [item["id"] for item in listed.json()] == [
        "octo/pricing",
        "octo/content",
        "octo/webhooks",
        "octo/offers",
    ]
    # Offers' prices are octo/pricing's, as OCTO's specification says.
    assert listed.json()[3]["dependencies"] == ["octo/pricing"]
    assert listed["Octo-Capabilities"] == "octo/pricing"


def test_a_nul_anywhere_is_a_bad_request(octo, timed_day):
    body = reserve_body(timed_day.date, uuid="b\x00")
    assert octo.post("/octo/bookings", body, format="json").json()["error"] == "BAD_REQUEST"
    assert octo.get("/octo/bookings/a%00b").json()["error"] == "BAD_REQUEST"
    assert octo.get("/octo/bookings", {"resellerReference": "\x00"}).json()["error"] == (
        "BAD_REQUEST"
    )
    assert not Booking.objects.exists()


def test_a_body_over_the_limit_is_refused_in_octos_shape_before_anything_is_held(
    octo, timed_day, settings
):
    """/octo/ bodies are bounded as /v1.1's are (MUSEUM_MAX_BODY_BYTES), answered as OCTO errs."""
    settings.MUSEUM_MAX_BODY_BYTES = 4096
    body = reserve_body(timed_day.date, notes="n" * 5000)
    answer = octo.post("/octo/bookings", body, format="json")
    assert answer.status_code == 413
    assert answer.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "The request body is larger than the limit of 4096 bytes.",
        "limit": 4096,
    }
    assert not Order.objects.exists()


def test_a_resellers_customer_opens_the_pdf_link_without_an_account(octo, timed_day):
    """PDF_URL is a signed link: the reseller hands it on as it is; it opens only a paid order's
    PDF, and only the order it was signed for."""
    octo.post("/octo/bookings", reserve_body(timed_day.date), format="json")
    order_id = Order.objects.get().pk
    anyone = Client()
    path = f"/orders/tickets/{sign_tickets_link(order_id=order_id)}.pdf"
    assert anyone.get(path).status_code == 404  # held, not yet paid: nothing admits

    confirmed = octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json").json()
    link = confirmed["voucher"]["deliveryOptions"][1]["deliveryValue"]
    assert link.endswith(path)
    answer = anyone.get(link)
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/pdf"
    assert answer.content.startswith(b"%PDF")

    cancel_token = sign_cancel_link(order_id=order_id)
    assert anyone.get(f"/orders/tickets/{cancel_token}.pdf").status_code == 404
    assert anyone.get(path.replace(".pdf", "x.pdf")).status_code == 404


def test_the_pdf_link_is_limited_per_address(octo, timed_day, settings):
    """Each answer may draw a PDF: a stranger cannot make the museum draw thousands."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "anon": "2/min",
        },
    }
    octo.post("/octo/bookings", reserve_body(timed_day.date), format="json")
    confirmed = octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json").json()
    link = confirmed["voucher"]["deliveryOptions"][1]["deliveryValue"]
    anyone = Client()

    assert [anyone.get(link).status_code for _ in range(3)] == [200, 200, 429]
