"""OCTO bookings through the sale's rules: holds that run out with no worker, confirmations
after them, the cut-off, the door, changes while on hold, partners' net prices."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from audit.models import AuditRecord
from events.models import EventDate
from hours.models import EntrySlot
from octo.models import Booking, PartnerTerms
from octo.selectors import partner_statement
from orders.models import Order, OrderStatus, VisitorCategory
from orders.services.pricing import active_categories
from tests.factories import MuseumDayFactory, SpecialEventFactory, door_member, partner_member
from tests.octo.conftest import B1, later, octo_client, reserve_body, slot_id, uid
from tickets.services import check_in


def slot(day, hour=10) -> EntrySlot:
    return EntrySlot.objects.get(day=day, entry_time=dt.time(hour))


def vacancies(octo, day) -> int:
    slots = octo.post(
        "/octo/availability",
        {"productId": "general", "optionId": "DEFAULT", "availabilityIds": [slot_id(day, 10)]},
        format="json",
    ).json()
    return slots[0]["vacancies"]


def test_a_hold_that_ran_out_reads_as_free_and_the_read_writes_nothing(octo, timed_day):
    day = timed_day.date
    octo.post(
        "/octo/bookings", reserve_body(day, "adult", "adult", expirationMinutes=5), format="json"
    )
    assert vacancies(octo, day) == 2

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=6)):
        audited = AuditRecord.objects.count()
        assert octo.get(f"/octo/bookings/{B1}").json()["status"] == "EXPIRED"
        assert vacancies(octo, day) == 4
        # Nothing written: the job gives the places back (orders.jobs).
        assert Order.objects.get().status == OrderStatus.HELD
        assert slot(timed_day).sold == 2
        assert AuditRecord.objects.count() == audited

        # A sale that needs them takes them back itself.
        taken = octo.post(
            "/octo/bookings",
            reserve_body(day, *["adult"] * 4, uuid=uid("b-2")),
            format="json",
        )
        assert taken.status_code == 200, taken.json()

    assert Order.objects.get(octo_booking__uuid=B1).status == OrderStatus.EXPIRED
    assert slot(timed_day).sold == 4


def test_expiration_minutes_are_capped_by_the_setting(octo, timed_day, settings):
    settings.MUSEUM_OCTO_MAX_HOLD_MINUTES = 20
    before = timezone.now()
    octo.post("/octo/bookings", reserve_body(timed_day.date, expirationMinutes=600), format="json")
    expires = Order.objects.get().hold_expires_at
    assert before + dt.timedelta(minutes=20) <= expires <= timezone.now() + dt.timedelta(minutes=20)


def test_confirm_after_expiry_retakes_free_places(octo, timed_day):
    octo.post("/octo/bookings", reserve_body(timed_day.date, "adult", "child"), format="json")
    first = Order.objects.get()

    with time_machine.travel(timezone.now() + dt.timedelta(hours=1)):
        confirmed = octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json").json()

    assert confirmed["status"] == "CONFIRMED"
    assert [unit["unitId"] for unit in confirmed["unitItems"]] == ["adult", "child"]
    first.refresh_from_db()
    assert first.status == OrderStatus.EXPIRED
    booking = Booking.objects.get()
    assert booking.order != first and booking.order.status == OrderStatus.CONFIRMED
    assert slot(timed_day).sold == 2


def test_confirm_after_expiry_with_the_places_gone_is_unprocessable(octo, timed_day):
    day = timed_day.date
    octo.post("/octo/bookings", reserve_body(day, *["adult"] * 4), format="json")

    with time_machine.travel(timezone.now() + dt.timedelta(hours=1)):
        other = octo_client(partner_member(username="other"))
        taken = other.post(
            "/octo/bookings", reserve_body(day, *["adult"] * 3, uuid=uid("o-1")), format="json"
        )
        assert taken.json()["status"] == "ON_HOLD"
        refused = octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json")

    assert (refused.status_code, refused.json()["error"]) == (400, "UNPROCESSABLE_ENTITY")
    assert slot(timed_day).sold == 3


def test_cancel_after_the_cut_off_is_refused(octo, timed_day, settings):
    octo.post("/octo/bookings", reserve_body(timed_day.date), format="json")
    octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json")
    settings.MUSEUM_CANCEL_HOURS_BEFORE = 24 * 7

    refused = octo.post(f"/octo/bookings/{B1}/cancel", {}, format="json")

    assert (refused.status_code, refused.json()["error"]) == (400, "UNPROCESSABLE_ENTITY")
    assert Order.objects.get().status == OrderStatus.CONFIRMED


def test_a_confirmed_bookings_qr_is_admitted_at_the_door(octo):
    today = timezone.localdate()
    MuseumDayFactory(date=today, opens_at=dt.time(0), closes_at=dt.time.max)
    body = reserve_body(today, hour=0)
    assert octo.post("/octo/bookings", body, format="json").status_code == 200
    confirmed = octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json").json()
    qr = confirmed["unitItems"][0]["ticket"]["deliveryOptions"][0]["deliveryValue"]

    admission = check_in(scanned=qr, by=door_member(username="door"))

    assert [str(ticket.pk) for ticket in admission.admitted] == [
        Booking.objects.get().unit_items[0]["ticketId"]
    ]


def test_a_held_bookings_units_change_by_patch(octo, timed_day):
    octo.post("/octo/bookings", reserve_body(timed_day.date), format="json")
    patched = octo.patch(
        f"/octo/bookings/{B1}",
        {"unitItems": [{"unitId": "adult"}, {"unitId": "adult"}], "notes": "Two now"},
        format="json",
    ).json()
    assert (len(patched["unitItems"]), patched["notes"], patched["status"]) == (
        2,
        "Two now",
        "ON_HOLD",
    )
    assert slot(timed_day).sold == 2
    assert Order.objects.filter(status=OrderStatus.HELD).count() == 1


@pytest.mark.parametrize("capability", [True, False])
def test_net_prices_from_the_partners_commission(partner, timed_day, capability):
    PartnerTerms.objects.create(account=partner, commission_percent=Decimal("20"))
    octo = octo_client(partner)
    if capability:
        octo.credentials(
            HTTP_AUTHORIZATION=octo._credentials["HTTP_AUTHORIZATION"],
            HTTP_OCTO_CAPABILITIES="octo/pricing",
        )
    octo.post("/octo/bookings", reserve_body(timed_day.date, "adult", "adult"), format="json")
    answer = octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json")
    booking = answer.json()
    order = Order.objects.get()

    if capability:
        assert answer["Octo-Capabilities"] == "octo/pricing"
        retail = int(order.total * 100)
        assert booking["pricing"]["retail"] == retail
        assert booking["pricing"]["net"] == retail * 80 // 100
    else:
        assert "pricing" not in booking
    [line] = partner_statement(partner=partner, month=timezone.localdate())
    assert (line.uuid, line.retail, line.commission, line.net) == (
        B1,
        order.total,
        order.total * Decimal("0.2"),
        order.total * Decimal("0.8"),
    )


def test_a_held_booking_is_rebooked_on_another_product_by_patch(octo, timed_day):
    event = SpecialEventFactory(dates=[later(5)])
    EventDate.objects.filter(event=event).update(capacity=10)  # as the event's service copies it
    octo.post("/octo/bookings", reserve_body(timed_day.date, "adult"), format="json")

    answer = octo.patch(
        f"/octo/bookings/{B1}",
        {
            "productId": str(event.pk),
            "optionId": "DEFAULT",
            "availabilityId": slot_id(later(5), 0),
            "unitItems": [{"unitId": "adult"}, {"unitId": "child"}],
        },
        format="json",
    )

    assert answer.status_code == 200, answer.json()
    patched = answer.json()
    assert (patched["productId"], patched["availabilityId"], patched["status"]) == (
        str(event.pk),
        slot_id(later(5), 0),
        "ON_HOLD",
    )
    assert [unit["unitId"] for unit in patched["unitItems"]] == ["adult", "child"]
    assert slot(timed_day).sold == 0
    assert EventDate.objects.get(event=event).sold == 2
    held = Order.objects.get(status=OrderStatus.HELD)
    assert (held.event_id, held.date) == (event.pk, later(5))
    assert Booking.objects.get().product_id == str(event.pk)


def test_a_patch_to_an_unknown_product_changes_nothing(octo, timed_day):
    octo.post("/octo/bookings", reserve_body(timed_day.date, "adult"), format="json")
    before = Booking.objects.get()

    refused = octo.patch(
        f"/octo/bookings/{B1}",
        {"productId": "nope", "unitItems": [{"unitId": "adult"}] * 2, "notes": "More"},
        format="json",
    )

    assert refused.status_code == 400
    assert (refused.json()["error"], refused.json()["productId"]) == ("INVALID_PRODUCT_ID", "nope")
    after = Booking.objects.get()
    assert (after.order_id, after.product_id, after.notes) == (before.order_id, "general", "")
    assert after.order.status == OrderStatus.HELD
    assert slot(timed_day).sold == 1


def test_a_patch_to_an_unknown_option_is_invalid_option_id(octo, timed_day):
    octo.post("/octo/bookings", reserve_body(timed_day.date), format="json")
    refused = octo.patch(f"/octo/bookings/{B1}", {"optionId": "nope"}, format="json").json()
    assert (refused["error"], refused["optionId"]) == ("INVALID_OPTION_ID", "nope")


def test_a_confirmed_bookings_product_does_not_change(octo, timed_day):
    event = SpecialEventFactory(dates=[later(5)])
    octo.post("/octo/bookings", reserve_body(timed_day.date), format="json")
    octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json")

    refused = octo.patch(
        f"/octo/bookings/{B1}",
        {"productId": str(event.pk), "availabilityId": slot_id(later(5), 0)},
        format="json",
    )
    same = octo.patch(
        f"/octo/bookings/{B1}", {"productId": "general", "notes": "Hi"}, format="json"
    )

    assert (refused.status_code, refused.json()["error"]) == (400, "UNPROCESSABLE_ENTITY")
    assert (same.status_code, same.json()["notes"]) == (200, "Hi")
    booking = Booking.objects.get()
    assert (booking.product_id, booking.order.status) == ("general", OrderStatus.CONFIRMED)
    assert slot(timed_day).sold == 1


@pytest.mark.parametrize("capability", [True, False])
def test_the_calendar_carries_unit_prices_net_of_the_commission(partner, timed_day, capability):
    PartnerTerms.objects.create(account=partner, commission_percent=Decimal("20"))
    asked = {"HTTP_OCTO_CAPABILITIES": "octo/pricing"} if capability else {}
    body = {
        "productId": "general",
        "optionId": "DEFAULT",
        "localDateStart": timed_day.date.isoformat(),
        "localDateEnd": timed_day.date.isoformat(),
    }

    [day] = (
        octo_client(partner)
        .post("/octo/availability/calendar", body, format="json", **asked)
        .json()
    )

    if capability:
        prices = {unit["unitId"]: unit for unit in day["unitPricingFrom"]}
        adult = VisitorCategory.objects.get(category="adult").general_price
        assert (prices["adult"]["retail"], prices["adult"]["net"]) == (
            int(adult * 100),
            int(adult * 80),
        )
        assert set(prices) == set(active_categories().values_list("category", flat=True))
    else:
        assert "unitPricingFrom" not in day


@pytest.mark.parametrize("items", [None, []], ids=["missing", "empty"])
def test_a_reservation_without_unit_items_is_unprocessable(octo, timed_day, items):
    """As OCTO's validator expects: no units to book is UNPROCESSABLE_ENTITY, not BAD_REQUEST."""
    body = reserve_body(timed_day.date)
    if items is None:
        del body["unitItems"]
    else:
        body["unitItems"] = items
    answer = octo.post("/octo/bookings", body, format="json")
    assert answer.status_code == 400
    assert answer.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert not Order.objects.exists()
