"""A reseller cannot hoard the stock or overwrite its own customers: holds with a ceiling, a
limit on the places a partner holds unpaid (over /octo/ and /v1.1 alike), rebookings that keep
the hold's end, and contact changes through the sale's own service."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from audit.models import AuditRecord
from events.models import EventDate
from octo.models import Booking
from orders.models import Order, OrderStatus, SaleLimits
from tests.conftest import client_for
from tests.factories import SpecialEventFactory
from tests.octo.conftest import B1, later, reserve_body, slot_id, uid


def reserve(octo, day, *units, uuid=B1, hour=10, **extra):
    return octo.post(
        "/octo/bookings", reserve_body(day, *units, uuid=uuid, hour=hour, **extra), format="json"
    )


def test_extensions_never_hold_past_the_ceiling_from_the_reservation(octo, timed_day, settings):
    settings.MUSEUM_OCTO_MAX_HOLD_MINUTES = 60
    reserve(octo, timed_day.date, expirationMinutes=30)
    reserved_at = Booking.objects.get().created_at
    extend = f"/octo/bookings/{B1}/extend"

    with time_machine.travel(reserved_at + dt.timedelta(minutes=20), tick=False):
        assert octo.post(extend, {"expirationMinutes": 40}, format="json").status_code == 200
    with time_machine.travel(reserved_at + dt.timedelta(minutes=50), tick=False):
        refused = octo.post(extend, {"expirationMinutes": 20}, format="json")
        # Asked again and again, the answer stays: the hold ends an hour after the reservation.
        again = octo.post(extend, {"expirationMinutes": 11}, format="json")

    assert refused.status_code == again.status_code == 400
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    latest = (reserved_at + dt.timedelta(minutes=60)).astimezone(dt.UTC)
    assert latest.strftime("%H:%M:%S UTC") in refused.json()["errorMessage"]
    order = Order.objects.get()
    assert order.hold_expires_at == reserved_at + dt.timedelta(minutes=60)
    assert order.status == OrderStatus.HELD


def test_a_rebooking_keeps_the_end_of_the_hold_it_replaces(octo, timed_day):
    reserve(octo, timed_day.date, expirationMinutes=5)
    ends = Order.objects.get().hold_expires_at

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=4)):
        moved = octo.patch(
            f"/octo/bookings/{B1}", {"availabilityId": slot_id(timed_day.date, 11)}, format="json"
        )

    assert moved.status_code == 200, moved.json()
    held = Order.objects.get(status=OrderStatus.HELD)
    assert held.slot.entry_time == dt.time(11)
    assert held.hold_expires_at == ends


@pytest.fixture
def three_held(settings):
    settings.MUSEUM_PARTNER_MAX_HELD_PLACES = 3


def test_a_partner_holds_at_most_so_many_places_unpaid_over_octo(octo, timed_day, three_held):
    assert reserve(octo, timed_day.date, "adult", "adult").status_code == 200

    over = reserve(octo, timed_day.date, "adult", "adult", uuid=uid("b-2"), hour=11)

    assert over.status_code == 400
    assert over.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "At most 3 places may be held unpaid at once" in over.json()["errorMessage"]
    assert not Booking.objects.filter(uuid=uid("b-2")).exists()


def test_a_partners_confirmed_or_cancelled_bookings_hold_nothing(octo, timed_day, three_held):
    reserve(octo, timed_day.date, "adult", "adult")
    octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json")
    reserve(octo, timed_day.date, "adult", "adult", uuid=uid("b-2"), hour=11)
    octo.post(f"/octo/bookings/{uid('b-2')}/cancel", {}, format="json")

    third = reserve(octo, timed_day.date, "adult", "adult", "adult", uuid=uid("b-3"), hour=11)

    assert third.status_code == 200, third.json()


def test_the_partner_limit_counts_over_v11_and_octo_alike(partner, octo, timed_day, three_held):
    reserve(octo, timed_day.date, "adult", "adult")
    api = client_for(partner)

    over = api.post(
        "/v1.1/orders",
        {
            "email": "group@example.com",
            "ticketType": "general",
            "ticketDate": timed_day.date.isoformat(),
            "entryTime": "11:00",
            "lines": [{"category": "adult", "quantity": 2}],
            "hold": True,
        },
        format="json",
    )

    assert over.status_code == 429
    assert (over.json()["code"], over.json()["limit"]) == ("too_many_held_places", 3)


def test_a_partners_own_value_in_the_admin_wins(partner, octo, timed_day, three_held):
    SaleLimits.objects.create(account=partner, max_held_places=10)
    reserve(octo, timed_day.date, "adult", "adult")

    more = reserve(octo, timed_day.date, "adult", "adult", uuid=uid("b-2"), hour=11)

    assert more.status_code == 200, more.json()


def test_a_patch_changes_only_the_contact_fields_it_names(octo, timed_day):
    contact = {"fullName": "Ada Lovelace", "emailAddress": "ada@example.com", "country": "GB"}
    reserve(octo, timed_day.date, contact=contact)

    patched = octo.patch(
        f"/octo/bookings/{B1}", {"contact": {"phoneNumber": "+44 20 7946 0000"}}, format="json"
    ).json()

    assert patched["contact"]["fullName"] == "Ada Lovelace"
    assert patched["contact"]["emailAddress"] == "ada@example.com"
    assert patched["contact"]["country"] == "GB"
    assert patched["contact"]["phoneNumber"] == "+44 20 7946 0000"
    order = Order.objects.get()
    assert (order.name, order.email, order.phone) == (
        "Ada Lovelace",
        "ada@example.com",
        "+44 20 7946 0000",
    )


def test_a_contact_change_moves_the_mailbox_and_is_audited(octo, timed_day):
    reserve(octo, timed_day.date, contact={"emailAddress": "ada@example.com"})
    order = Order.objects.get()

    octo.patch(
        f"/octo/bookings/{B1}",
        {"contact": {"emailAddress": "Grace.Hopper+tickets@example.com", "fullName": "Grace"}},
        format="json",
    )

    order.refresh_from_db()
    assert (order.email, order.mailbox, order.name) == (
        "Grace.Hopper+tickets@example.com",
        "grace.hopper@example.com",
        "Grace",
    )
    change = AuditRecord.objects.filter(object_id=str(order.pk), action="changed").get()
    assert change.changes == {
        "email": ["ada@example.com", "Grace.Hopper+tickets@example.com"],
        "nameChanged": True,
    }


def test_a_contact_sent_again_writes_nothing(octo, timed_day):
    contact = {"emailAddress": "ada@example.com"}
    reserve(octo, timed_day.date, contact=contact)

    octo.patch(f"/octo/bookings/{B1}", {"contact": contact}, format="json")

    assert not AuditRecord.objects.filter(action="changed").exists()


def test_a_contact_field_sent_as_null_is_removed(octo, timed_day):
    reserve(octo, timed_day.date, contact={"emailAddress": "ada@example.com", "country": "GB"})

    patched = octo.patch(
        f"/octo/bookings/{B1}", {"contact": {"emailAddress": None}}, format="json"
    ).json()

    assert patched["contact"]["country"] == "GB"
    assert not patched["contact"].get("emailAddress")
    assert Order.objects.get().email == ""


def test_an_event_dates_run_out_hold_reads_as_free_and_writes_nothing(octo, timed_day):
    event = SpecialEventFactory(dates=[later(5)])
    EventDate.objects.filter(event=event).update(capacity=10)
    body = {
        "productId": str(event.pk),
        "optionId": "DEFAULT",
        "availabilityId": slot_id(later(5), 0),
        "unitItems": [{"unitId": "adult"}] * 3,
        "expirationMinutes": 5,
    }
    octo.post("/octo/bookings", body, format="json")
    ask = {
        "productId": str(event.pk),
        "optionId": "DEFAULT",
        "availabilityIds": [body["availabilityId"]],
    }

    def vacancies():
        return octo.post("/octo/availability", ask, format="json").json()[0]["vacancies"]

    assert vacancies() == 7
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=6)):
        assert vacancies() == 10
    assert EventDate.objects.get(event=event).sold == 3
    assert Order.objects.get().status == OrderStatus.HELD
