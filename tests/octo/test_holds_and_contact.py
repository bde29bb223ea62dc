"""What tests/octo/test_stock.py leaves unsaid: a contact change tells the partner's
booking_update subscription, a confirmation merges a partial contact as a PATCH does, a hold
that ran out counts against no limit, and a timed slot's run-out hold reads as free, writes
nothing, and does not stand in the way of the next sale."""

import datetime as dt
import json

import pytest
import time_machine
from django.utils import timezone

from audit.models import Action, AuditRecord
from octo.models import Booking
from orders.models import Order, OrderStatus
from tests.factories import partner_member
from tests.octo.conftest import B1, octo_client, reserve_body, slot_id, uid
from webhooks.fanout import fan_out
from webhooks.models import Delivery

CONTACT = {
    "fullName": "Ada Lovelace",
    "firstName": "Ada",
    "lastName": "Lovelace",
    "emailAddress": "ada@example.com",
    "phoneNumber": "+44 20 1234",
    "country": "GB",
}


def reserve(octo, day, *units, **extra):
    return octo.post("/octo/bookings", reserve_body(day, *units, **extra), format="json")


def vacancies(octo, day, hour=10) -> int:
    slots = octo.post(
        "/octo/availability",
        {"productId": "general", "optionId": "DEFAULT", "availabilityIds": [slot_id(day, hour)]},
        format="json",
    ).json()
    return slots[0]["vacancies"]


def test_a_contact_change_tells_the_partners_booking_update_subscription(octo, timed_day, settings):
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MUSEUM_WEBHOOK_ALLOW_HTTP = True
    subscribed = octo.post(
        "/octo/webhooks",
        {"url": "http://127.0.0.1:9/hook", "event": "booking_update"},
        format="json",
    )
    assert subscribed.status_code == 200, subscribed.content
    reserve(octo, timed_day.date, contact=CONTACT)
    fan_out()  # the reservation's own update, out of the way

    octo.patch(
        f"/octo/bookings/{B1}", {"contact": {"emailAddress": "grace@example.com"}}, format="json"
    )
    fan_out()

    change = AuditRecord.objects.get(action=Action.CHANGED, object_id=str(Order.objects.get().pk))
    update = Delivery.objects.get(record_id=change.pk)
    assert update.event_type == "booking_update"
    contact = json.loads(update.payload)["booking"]["contact"]
    assert (contact["emailAddress"], contact["fullName"]) == ("grace@example.com", "Ada Lovelace")


def test_a_confirmation_with_a_partial_contact_keeps_the_rest(octo, timed_day):
    reserve(octo, timed_day.date, contact=CONTACT)

    confirmed = octo.post(
        f"/octo/bookings/{B1}/confirm", {"contact": {"phoneNumber": "+44 20 9999"}}, format="json"
    ).json()

    assert confirmed["status"] == "CONFIRMED"
    assert {key: confirmed["contact"][key] for key in CONTACT} == {
        **CONTACT,
        "phoneNumber": "+44 20 9999",
    }
    order = Order.objects.get()
    assert (order.name, order.email, order.phone) == (
        "Ada Lovelace",
        "ada@example.com",
        "+44 20 9999",
    )


def test_a_partners_hold_that_ran_out_counts_against_no_limit(octo, timed_day, settings):
    settings.MUSEUM_PARTNER_MAX_HELD_PLACES = 3
    reserve(octo, timed_day.date, "adult", "adult", "adult", expirationMinutes=5)

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=6)):
        again = reserve(octo, timed_day.date, "adult", "adult", "adult", uuid=uid("b-2"), hour=11)

    assert again.status_code == 200, again.json()


@pytest.mark.parametrize("buyer", ["same partner", "another partner"])
def test_a_slots_run_out_hold_reads_free_writes_nothing_and_yields_to_a_sale(
    octo, timed_day, buyer
):
    day = timed_day.date
    reserve(octo, day, "adult", "adult", "adult", expirationMinutes=5)
    assert vacancies(octo, day) == 1

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=6)):
        records = AuditRecord.objects.count()
        assert vacancies(octo, day) == 4
        assert AuditRecord.objects.count() == records
        assert Order.objects.get().status == OrderStatus.HELD
        assert timed_day.slots.get(entry_time=dt.time(10)).sold == 3

        seller = octo if buyer == "same partner" else octo_client(partner_member(username="b"))
        taken = reserve(seller, day, *["adult"] * 4, uuid=uid("b-2"))
        assert taken.status_code == 200, taken.content

    first = Booking.objects.get(uuid=B1).order
    assert first.status == OrderStatus.EXPIRED  # the sale gave its places back
    assert timed_day.slots.get(entry_time=dt.time(10)).sold == 4
