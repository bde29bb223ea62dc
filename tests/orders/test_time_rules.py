"""What is sold and admitted depends on the museum's clock (Europe/Amsterdam here): a slot is sold
until the next begins, the last slot and untimed entry until closing, the door admits general
entry until closing; and a slot never offers more than its day has left."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from hours.models import EntrySlot, MuseumDay
from orders.models import OrderStatus
from orders.services.sale import place_order
from tests.conftest import assert_problem
from tests.factories import MuseumDayFactory, SpecialEventFactory, partner_member
from tests.orders.conftest import order_body

DAY = dt.date(2030, 6, 12)  # a Wednesday
ORDERS = "/v1.1/orders"
CHECK_IN = "/v1.1/tickets/check-in"


@pytest.fixture(autouse=True)
def amsterdam(settings):
    settings.TIME_ZONE = "Europe/Amsterdam"


def at(hour: int, minute: int = 0, day: dt.date = DAY) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))


@pytest.fixture
def timed_day(db):
    day = MuseumDayFactory(date=DAY, opens_at=dt.time(10), closes_at=dt.time(17))
    for entry in (dt.time(10), dt.time(10, 30), dt.time(11)):
        EntrySlot.objects.create(day=day, entry_time=entry, capacity=10)
    return day


def sell_at(moment: dt.datetime, quantity: int = 1, **order):
    """An order placed through the service at `moment` of the museum's clock."""
    with time_machine.travel(moment, tick=False):
        return place_order(
            buyer=partner_member(),
            email="a@example.com",
            ticket_type=order.pop("ticket_type", "general"),
            ticket_date=DAY,
            lines=[{"category": "adult", "quantity": quantity}],
            **order,
        )


def order_at(client, moment: dt.datetime, **body):
    with time_machine.travel(moment, tick=False):
        return client.post(ORDERS, order_body(DAY, ("adult", 1), **body), format="json")


# (hour, minute, days before DAY) in the museum's zone, read once its zone is set.
@pytest.mark.parametrize(
    ("when", "entry", "sold"),
    [
        ((10, 29, 0), "10:00", True),  # before the next slot begins
        ((10, 30, 0), "10:00", False),  # the next slot has begun
        ((16, 59, 0), "11:00", True),  # the last slot, before closing
        ((17, 0, 0), "11:00", False),  # the last slot, at closing
        ((18, 0, 1), "10:00", True),  # the evening before: all on sale
    ],
)
def test_a_slot_is_sold_until_the_next_begins_and_the_last_until_closing(
    visitor_client, timed_day, when, entry, sold
):
    hour, minute, days_before = when
    moment = at(hour, minute, DAY - dt.timedelta(days=days_before))
    answer = order_at(visitor_client, moment, entryTime=entry)

    if sold:
        assert answer.status_code == 201, answer.content
    else:
        assert assert_problem(answer, 409)["code"] == "sale_ended"
        assert answer.json()["entryTime"] == entry


@pytest.mark.parametrize(("minute", "sold"), [(59, True), (60, False)])
def test_untimed_entry_is_sold_today_until_closing(visitor_client, db, minute, sold):
    MuseumDayFactory(date=DAY, opens_at=dt.time(9), closes_at=dt.time(18))

    answer = order_at(visitor_client, at(17) + dt.timedelta(minutes=minute))

    assert answer.status_code == (201 if sold else 409), answer.content


def test_after_midnight_the_new_day_is_sold_and_the_last_is_past(visitor_client, db):
    MuseumDayFactory(date=DAY, opens_at=dt.time(9), closes_at=dt.time(18))
    MuseumDayFactory(date=DAY + dt.timedelta(days=1), opens_at=dt.time(9), closes_at=dt.time(18))
    midnight = at(0, 0, DAY + dt.timedelta(days=1))

    with time_machine.travel(midnight + dt.timedelta(seconds=30), tick=False):
        past = visitor_client.post(ORDERS, order_body(DAY), format="json")
        new_day = visitor_client.post(ORDERS, order_body(DAY + dt.timedelta(days=1)), format="json")

    assert assert_problem(past, 400)["code"] == "date_in_past"
    assert new_day.status_code == 201


def test_the_contract_purchase_today_takes_the_earliest_slot_still_on_sale(
    visitor_client, timed_day
):
    body = {"ticketType": "general", "ticketDate": DAY.isoformat(), "email": "a@example.com"}
    with time_machine.travel(at(10, 45), tick=False):
        answer = visitor_client.post("/v1.1/tickets", body, format="json")
    with time_machine.travel(at(17), tick=False):
        closed = visitor_client.post("/v1.1/tickets", body, format="json")

    assert answer.json()["message"].endswith("timed entry from 10:30")
    assert assert_problem(closed, 409)["code"] == "sale_ended"


def test_the_slots_list_marks_a_slot_whose_sale_ended(visitor_client, timed_day):
    with time_machine.travel(at(10, 30), tick=False):
        slots = visitor_client.get(f"/v1.1/museum-hours/{DAY}/slots").json()

    assert [(s["entryTime"], s["over"], s["available"]) for s in slots] == [
        ("10:00", True, 0),
        ("10:30", False, 10),
        ("11:00", False, 10),
    ]


def test_a_slot_never_offers_more_than_its_day_has_left(visitor_client, timed_day):
    MuseumDay.objects.filter(pk=DAY).update(capacity=5, sold=3)

    with time_machine.travel(at(8), tick=False):
        slots = visitor_client.get(f"/v1.1/museum-hours/{DAY}/slots").json()

    assert {s["available"] for s in slots} == {2}


@pytest.mark.parametrize(("minute", "admitted"), [(59, True), (60, False)])
def test_the_door_admits_general_entry_until_closing(staff_client, db, minute, admitted):
    MuseumDayFactory(date=DAY, opens_at=dt.time(9), closes_at=dt.time(18))
    ticket = sell_at(at(9)).sold_tickets[0]

    with time_machine.travel(at(17) + dt.timedelta(minutes=minute), tick=False):
        answer = staff_client.post(CHECK_IN, {"code": ticket.confirmation_code}, format="json")

    if admitted:
        assert answer.status_code == 200, answer.content
    else:
        assert assert_problem(answer, 409)["reason"] == "closed"


def test_the_door_admits_an_event_ticket_all_day(staff_client, db):
    event = SpecialEventFactory(dates=[DAY])
    ticket = sell_at(at(9), ticket_type="event", event_id=event.pk).sold_tickets[0]

    with time_machine.travel(at(23, 30), tick=False):
        answer = staff_client.post(CHECK_IN, {"code": ticket.confirmation_code}, format="json")

    assert answer.status_code == 200, answer.content


def test_a_day_full_of_expired_holds_in_one_slot_sells_in_another(db):
    day = MuseumDayFactory(date=DAY, capacity=2)
    early, late = (
        EntrySlot.objects.create(day=day, entry_time=dt.time(hour), capacity=10)
        for hour in (10, 15)
    )
    held = sell_at(at(8), 2, entry_time=early.entry_time, hold=True)

    # The hold ran out at 8:10; no worker released it.
    sold = sell_at(at(9), entry_time=late.entry_time)

    assert sold.slot == late
    held.refresh_from_db()
    assert held.status == OrderStatus.EXPIRED
    assert MuseumDay.objects.get(pk=DAY).sold == 1
