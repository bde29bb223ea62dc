"""Orders through HTTP: categories, all-or-nothing orders, holds, cancellation, the PDF."""

import datetime as dt
import re
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from hours.models import EntrySlot, MuseumDay
from orders.models import Order, Refund, Ticket, VisitorCategory
from tests.conftest import assert_problem, client_for
from tests.factories import MuseumDayFactory, SpecialEventFactory, UserFactory
from tests.orders.conftest import later, order_body

ORDERS = "/v1.1/orders"


def place(client, body, **headers):
    return client.post(ORDERS, body, format="json", headers=headers)


def pdf_pages(pdf: bytes) -> int:
    assert pdf.startswith(b"%PDF-")
    return len(re.findall(rb"/Type\s*/Page\b", pdf))


def at(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))


# Visitor categories


def test_any_account_reads_the_visitor_categories(visitor_client):
    answer = visitor_client.get("/v1.1/visitor-categories")

    assert answer.status_code == 200
    by_code = {item["category"]: item for item in answer.json()}
    assert list(by_code) == ["adult", "child", "student", "senior", "infant"]
    assert by_code["adult"] == {
        "category": "adult",
        "name": "Adult",
        "generalPrice": 15,
        "taxRate": 0,
        "eventPricePercent": 100,
        "checkAtDoor": False,
        "needsCompanion": False,
        "payWhatYouWant": False,
        "currency": "EUR",
    }
    assert by_code["child"]["generalPrice"] == 7.5
    assert by_code["infant"]["generalPrice"] == 0 and by_code["infant"]["needsCompanion"]


def test_inactive_categories_are_not_listed_and_the_currency_is_a_setting(visitor_client, settings):
    settings.MUSEUM_CURRENCY = "GBP"
    VisitorCategory.objects.filter(category="senior").update(active=False)

    answer = visitor_client.get("/v1.1/visitor-categories").json()

    assert "senior" not in {item["category"] for item in answer}
    assert {item["currency"] for item in answer} == {"GBP"}


def test_categories_need_an_account(anonymous_client):
    assert anonymous_client.get("/v1.1/visitor-categories").status_code == 401


# Placing an order


def test_a_family_orders_four_tickets_priced_by_category(visitor_client, visitor, open_day):
    answer = place(visitor_client, order_body(open_day.date, ("adult", 2), ("child", 2)))

    assert answer.status_code == 201
    body = answer.json()
    assert body["status"] == "confirmed"
    assert body["total"] == 45  # 2 x 15.00 + 2 x 7.50
    assert body["currency"] == "EUR"
    assert body["confirmationCode"].startswith("order-")
    assert "holdExpiresAt" not in body
    assert sorted((t["category"], t["price"]) for t in body["tickets"]) == [
        ("adult", 15),
        ("adult", 15),
        ("child", 7.5),
        ("child", 7.5),
    ]
    order = Order.objects.get(pk=body["orderId"])
    assert order.buyer == visitor and order.tickets.count() == 4
    assert MuseumDay.objects.get(pk=open_day.pk).sold == 4


def test_event_prices_are_each_categorys_share_of_the_events(visitor_client):
    event = SpecialEventFactory(price=Decimal("45.00"), dates=[later()])
    body = order_body(later(), ("adult", 1), ("child", 1), ("senior", 1))
    body.update(ticketType="event", eventId=str(event.pk))

    answer = place(visitor_client, body)

    assert answer.status_code == 201
    prices = sorted(t["price"] for t in answer.json()["tickets"])
    assert prices == [22.5, 36, 45]  # 50 %, 80 %, 100 %
    assert answer.json()["eventId"] == str(event.pk)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"lines": []}, "lines"),
        ({"lines": [{"category": "adult", "quantity": 0}]}, "lines.0.quantity"),
        ({"lines": [{"category": "adult", "quantity": "2"}]}, "lines.0.quantity"),
        ({"lines": [{"category": "wizard", "quantity": 1}]}, "lines.0.category"),
        ({"lines": [{"category": "adult", "quantity": 21}]}, "lines"),
        (
            {
                "lines": [
                    {"category": "adult", "quantity": 15},
                    {"category": "child", "quantity": 6},
                ]
            },
            "lines",
        ),
        ({"hold": "yes"}, "hold"),
        ({"entryTime": "10:00"}, "entryTime"),
        ({"entryTime": "25:00"}, "entryTime"),
    ],
)
def test_bad_orders_are_400s_naming_the_field(visitor_client, open_day, change, field):
    answer = place(visitor_client, {**order_body(open_day.date), **change})

    assert answer.status_code == 400
    assert field in answer.json()["errors"]
    assert not Order.objects.exists() and not Ticket.objects.exists()
    assert MuseumDay.objects.get(pk=open_day.pk).sold == 0


def test_an_inactive_category_is_refused(visitor_client, open_day):
    VisitorCategory.objects.filter(category="student").update(active=False)

    answer = place(visitor_client, order_body(open_day.date, ("adult", 1), ("student", 1)))

    assert answer.status_code == 400
    assert "lines.1.category" in answer.json()["errors"]


def test_the_ticket_limit_is_a_setting(visitor_client, open_day, settings):
    settings.MUSEUM_MAX_TICKETS_PER_ORDER = 2

    assert place(visitor_client, order_body(open_day.date, ("adult", 3))).status_code == 400
    assert place(visitor_client, order_body(open_day.date, ("adult", 2))).status_code == 201


def test_an_order_that_does_not_fit_takes_nothing_and_says_what_is_left(visitor_client):
    day = MuseumDayFactory(date=later(), capacity=5)
    assert place(visitor_client, order_body(day.date, ("adult", 3))).status_code == 201

    answer = place(visitor_client, order_body(day.date, ("adult", 2), ("child", 1)))

    assert answer.status_code == 409
    assert answer.json()["reason"] == "sold_out"
    assert answer.json()["available"] == 2
    assert MuseumDay.objects.get(pk=day.pk).sold == 3
    assert Ticket.objects.count() == 3


def test_a_closed_day_and_a_past_day_are_refused(visitor_client):
    MuseumDayFactory(date=later(), is_closed=True)

    assert place(visitor_client, order_body(later())).json()["reason"] == "museum_closed"
    past = place(visitor_client, order_body(timezone.localdate() - dt.timedelta(days=1)))
    assert past.json()["reason"] == "date_in_past"


def test_an_idempotency_key_makes_a_retried_order_one_order(visitor_client, open_day):
    body = order_body(open_day.date, ("adult", 2))

    first = place(visitor_client, body, **{"Idempotency-Key": "family-1"})
    again = place(visitor_client, body, **{"Idempotency-Key": "family-1"})

    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Order.objects.count() == 1 and Ticket.objects.count() == 2


# Reading an order


def test_the_buyer_and_staff_see_an_order_and_others_get_404(
    visitor_client, staff_client, door_staff, open_day
):
    order_id = place(visitor_client, order_body(open_day.date, ("adult", 2))).json()["orderId"]
    url = f"{ORDERS}/{order_id}"

    assert visitor_client.get(url).status_code == 200
    assert staff_client.get(url).json()["orderId"] == order_id
    assert client_for(UserFactory(username="other")).get(url).status_code == 404
    assert client_for(door_staff).get(url).status_code == 404
    assert visitor_client.get(f"{ORDERS}/not-a-uuid").status_code == 404


def test_the_tickets_pdf_has_a_page_per_ticket(visitor_client, open_day):
    order_id = place(visitor_client, order_body(open_day.date, ("adult", 2))).json()["orderId"]

    answer = visitor_client.get(f"{ORDERS}/{order_id}/tickets.pdf")

    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/pdf"
    assert pdf_pages(answer.content) == 2
    other = client_for(UserFactory(username="other"))
    assert other.get(f"{ORDERS}/{order_id}/tickets.pdf").status_code == 404


def test_each_ticket_of_an_order_has_its_own_image(visitor_client, open_day):
    tickets = place(visitor_client, order_body(open_day.date, ("adult", 2))).json()["tickets"]

    for ticket in tickets:
        answer = visitor_client.get(f"/v1.1/tickets/{ticket['ticketId']}/qr")
        assert answer.status_code == 200 and answer["Content-Type"] == "image/png"


# The contract's purchase is an order of one


def test_a_contract_purchase_is_an_order_of_one_adult_at_the_adults_price(visitor_client, open_day):
    VisitorCategory.objects.filter(category="adult").update(general_price=Decimal("17.00"))
    body = {"ticketType": "general", "ticketDate": open_day.date.isoformat(), "email": "a@b.org"}

    answer = visitor_client.post("/v1.1/tickets", body, format="json")

    assert answer.status_code == 201
    assert answer.json()["message"] == "Museum general entry ticket purchased"
    ticket = Ticket.objects.get(pk=answer.json()["ticketId"])
    assert ticket.category.category == "adult" and ticket.price == Decimal("17.00")
    assert ticket.order.tickets.count() == 1 and ticket.order.total == Decimal("17.00")


# Holds


def test_a_held_order_keeps_its_places_until_confirmed(visitor_client, open_day, settings):
    settings.MUSEUM_HOLD_MINUTES = 10
    with time_machine.travel(at(timezone.localdate(), 9), tick=False):
        answer = place(visitor_client, order_body(open_day.date, ("adult", 2), hold=True))
        body = answer.json()
        assert answer.status_code == 201 and body["status"] == "held"
        assert dt.datetime.fromisoformat(body["holdExpiresAt"]) == at(timezone.localdate(), 9, 10)
        assert MuseumDay.objects.get(pk=open_day.pk).sold == 2
        assert not mail.outbox

    with time_machine.travel(at(timezone.localdate(), 9, 9), tick=False):
        confirmed = visitor_client.post(f"{ORDERS}/{body['orderId']}/confirm")

    assert confirmed.status_code == 200
    assert confirmed.json()["status"] == "confirmed"
    assert "holdExpiresAt" not in confirmed.json()


def test_an_expired_hold_cannot_be_confirmed_and_its_places_are_back(visitor_client):
    day = MuseumDayFactory(date=later(), capacity=2)
    today = timezone.localdate()
    with time_machine.travel(at(today, 9), tick=False):
        held = place(visitor_client, order_body(day.date, ("adult", 2), hold=True)).json()

    with time_machine.travel(at(today, 9, 11), tick=False):
        answer = visitor_client.post(f"{ORDERS}/{held['orderId']}/confirm")

    assert answer.status_code == 409 and answer.json()["reason"] == "hold_expired"
    assert MuseumDay.objects.get(pk=day.pk).sold == 0
    assert Order.objects.get(pk=held["orderId"]).status == "expired"
    assert not Ticket.objects.filter(cancelled_at__isnull=True).exists()


def test_a_buyer_finding_the_day_full_gets_the_places_of_expired_holds(visitor_client):
    day = MuseumDayFactory(date=later(), capacity=2)
    today = timezone.localdate()
    with time_machine.travel(at(today, 9), tick=False):
        held = place(visitor_client, order_body(day.date, ("adult", 2), hold=True)).json()
        assert place(visitor_client, order_body(day.date)).status_code == 409

    with time_machine.travel(at(today, 9, 30), tick=False):
        answer = place(visitor_client, order_body(day.date, ("adult", 2)))

    assert answer.status_code == 201
    assert Order.objects.get(pk=held["orderId"]).status == "expired"
    assert MuseumDay.objects.get(pk=day.pk).sold == 2


def test_only_the_buyer_or_staff_confirm(visitor_client, staff_client, open_day):
    held = place(visitor_client, order_body(open_day.date, hold=True)).json()
    url = f"{ORDERS}/{held['orderId']}/confirm"

    assert client_for(UserFactory(username="other")).post(url).status_code == 404
    assert staff_client.post(url).status_code == 200


# Cancellation


def test_the_buyer_cancels_until_the_deadline_and_the_refund_is_recorded(
    visitor_client, visitor, open_day
):
    order = place(visitor_client, order_body(open_day.date, ("adult", 1), ("child", 1))).json()

    answer = visitor_client.post(f"{ORDERS}/{order['orderId']}/cancel")

    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "cancelled" and body["refundDue"] == 22.5
    assert all(ticket["cancelled"] for ticket in body["tickets"])
    assert MuseumDay.objects.get(pk=open_day.pk).sold == 0
    assert sorted(Refund.objects.values_list("amount", flat=True)) == [
        Decimal("7.50"),
        Decimal("15.00"),
    ]
    assert Refund.objects.filter(cancelled_by=visitor).count() == 2
    assert Ticket.objects.count() == 2  # nothing deleted
    again = visitor_client.post(f"{ORDERS}/{order['orderId']}/cancel")
    assert again.status_code == 409 and again.json()["reason"] == "cancelled"


def test_after_the_deadline_the_buyer_is_too_late_but_staff_may_cancel(
    visitor_client, staff_client, settings
):
    settings.MUSEUM_CANCEL_HOURS_BEFORE = 24
    day = MuseumDayFactory(date=later(2))
    order = place(visitor_client, order_body(day.date)).json()
    url = f"{ORDERS}/{order['orderId']}/cancel"

    with time_machine.travel(at(later(1), 0, 1), tick=False):
        answer = visitor_client.post(url)
        assert answer.status_code == 409 and answer.json()["reason"] == "too_late"
        assert staff_client.post(url).status_code == 200


def test_one_ticket_of_an_order_is_cancelled_alone(visitor_client, open_day):
    order = place(visitor_client, order_body(open_day.date, ("adult", 1), ("child", 1))).json()
    child = next(t for t in order["tickets"] if t["category"] == "child")

    answer = visitor_client.post(f"{ORDERS}/{order['orderId']}/tickets/{child['ticketId']}/cancel")

    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "confirmed" and body["refundDue"] == 7.5
    assert MuseumDay.objects.get(pk=open_day.pk).sold == 1
    image = visitor_client.get(f"/v1.1/tickets/{child['ticketId']}/qr")
    assert image.status_code == 200
    again = visitor_client.post(f"{ORDERS}/{order['orderId']}/tickets/{child['ticketId']}/cancel")
    assert again.status_code == 409


def test_a_cancellation_s_refund_due_counts_the_order_s_earlier_refunds(visitor_client, open_day):
    # The answer adds its own refunds to what the earlier ones came to, read with the order's
    # lock: the same sum as a later read of the order.
    order = place(visitor_client, order_body(open_day.date, ("adult", 1), ("child", 1))).json()
    child = next(t for t in order["tickets"] if t["category"] == "child")
    visitor_client.post(f"{ORDERS}/{order['orderId']}/tickets/{child['ticketId']}/cancel")

    answer = visitor_client.post(f"{ORDERS}/{order['orderId']}/cancel")

    assert answer.status_code == 200 and answer.json()["refundDue"] == order["total"]
    assert visitor_client.get(f"{ORDERS}/{order['orderId']}").json()["refundDue"] == order["total"]


def test_others_cannot_cancel_an_order(visitor_client, open_day, door_staff):
    order = place(visitor_client, order_body(open_day.date)).json()
    url = f"{ORDERS}/{order['orderId']}/cancel"

    assert client_for(UserFactory(username="other")).post(url).status_code == 404
    assert client_for(door_staff).post(url).status_code == 404
    assert Order.objects.get().status == "confirmed"


# Timed entry


def test_an_order_on_a_timed_day_names_its_slot(visitor_client, timed_day):
    missing = place(visitor_client, order_body(timed_day.date))
    unknown = place(visitor_client, order_body(timed_day.date, entryTime="10:15"))
    answer = place(visitor_client, order_body(timed_day.date, ("adult", 2), entryTime="10:30"))

    assert missing.status_code == unknown.status_code == 400
    assert "entryTime" in missing.json()["errors"] and "entryTime" in unknown.json()["errors"]
    assert answer.status_code == 201
    assert answer.json()["entryTime"] == "10:30"
    assert {t["entryTime"] for t in answer.json()["tickets"]} == {"10:30"}
    slot = EntrySlot.objects.get(day=timed_day, entry_time=dt.time(10, 30))
    assert slot.sold == 2 and MuseumDay.objects.get(pk=timed_day.pk).sold == 2


def test_a_slot_too_full_for_the_order_takes_nothing(visitor_client, timed_day):
    answer = place(visitor_client, order_body(timed_day.date, ("adult", 5), entryTime="10:00"))

    assert answer.status_code == 409 and answer.json()["available"] == 4
    assert MuseumDay.objects.get(pk=timed_day.pk).sold == 0


def test_a_full_day_gives_back_the_slots_place(visitor_client):
    day = MuseumDayFactory(date=later(), capacity=1)
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=4)

    answer = place(visitor_client, order_body(day.date, ("adult", 2), entryTime="10:00"))

    assert answer.status_code == 409 and answer.json()["available"] == 1
    slot.refresh_from_db()
    assert slot.sold == 0


def test_a_contract_purchase_on_a_timed_day_gets_the_earliest_slot_with_room(
    visitor_client, timed_day
):
    EntrySlot.objects.filter(entry_time=dt.time(10)).update(sold=4)
    body = {"ticketType": "general", "ticketDate": timed_day.date.isoformat(), "email": "a@b.org"}

    answer = visitor_client.post("/v1.1/tickets", body, format="json")

    assert answer.status_code == 201
    assert answer.json()["message"].endswith("timed entry from 10:30")
    assert Ticket.objects.get().slot.entry_time == dt.time(10, 30)


def test_cancelling_a_checked_in_ticket_is_a_409_unless_staff_say_so(
    visitor_client, staff_client, open_day
):
    order = place(visitor_client, order_body(open_day.date, ("adult", 2))).json()
    used = order["tickets"][0]
    Ticket.objects.filter(pk=used["ticketId"]).update(checked_in_at=timezone.now())
    cancel = f"{ORDERS}/{order['orderId']}/tickets/{used['ticketId']}/cancel"

    assert assert_problem(visitor_client.post(cancel), 409)["code"] == "checked_in"
    assert assert_problem(staff_client.post(cancel), 409)["code"] == "checked_in"
    done = staff_client.post(cancel, {"evenIfCheckedIn": True}, format="json")

    assert done.status_code == 200 and done.json()["refundDue"] == 15.0
