"""Order tickets at the door: held orders are not paid, timed tickets wait for their slot."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from hours.models import EntrySlot, MuseumDay
from orders.services.sale import place_order
from tests.conftest import admission_statements
from tests.factories import MuseumDayFactory, partner_member, staff_member
from tickets import services

CHECK_IN = "/v1.1/tickets/check-in"
TODAY = dt.date(2030, 6, 12)


def at(hour: int, minute: int = 0) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(TODAY, dt.time(hour, minute)))


@pytest.fixture
def timed_today(db):
    day = MuseumDayFactory(date=TODAY, opens_at=dt.time(10), closes_at=dt.time(17))
    EntrySlot.objects.create(day=day, entry_time=dt.time(10, 30), capacity=40)
    return day


def order(*lines, hold=False, entry_time=dt.time(10, 30)):
    with time_machine.travel(at(8), tick=False):
        return place_order(
            buyer=partner_member(),
            email="family@example.com",
            ticket_type="general",
            ticket_date=TODAY,
            entry_time=entry_time,
            lines=[{"category": code, "quantity": n} for code, n in lines],
            hold=hold,
        )


def scan(client, ticket):
    return client.post(CHECK_IN, {"code": ticket.confirmation_code}, format="json")


def test_a_held_ticket_is_refused_as_not_paid(staff_client, timed_today):
    held = order(("adult", 1), hold=True)

    with time_machine.travel(at(8, 5), tick=False):
        answer = scan(staff_client, held.sold_tickets[0])

    assert answer.status_code == 409
    assert answer.json()["reason"] == "not_paid"


@pytest.mark.parametrize(
    ("hour", "minute", "admitted"),
    [(10, 0, False), (10, 14, False), (10, 15, True), (10, 20, True), (16, 0, True)],
)
def test_a_timed_ticket_is_admitted_from_its_entry_time_less_the_allowance(
    staff_client, timed_today, settings, hour, minute, admitted
):
    settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES = 15
    ticket = order(("adult", 1)).sold_tickets[0]

    with time_machine.travel(at(hour, minute), tick=False):
        answer = scan(staff_client, ticket)

    if admitted:
        assert answer.status_code == 200
    else:
        assert answer.status_code == 409
        assert answer.json()["reason"] == "too_early"
        assert answer.json()["entryTime"] == "10:30"


def test_a_check_in_names_the_category_its_proof_and_the_entry_slot(staff_client, timed_today):
    child = order(("child", 1)).sold_tickets[0]

    with time_machine.travel(at(10, 20), tick=False):
        body = scan(staff_client, child).json()

    assert (body["category"], body["checkAtDoor"], body["entryTime"]) == ("child", True, "10:30")


def test_a_valid_ticket_is_admitted_in_one_statement_with_what_the_door_shows(
    timed_today, django_assert_num_queries
):
    child = order(("child", 1)).sold_tickets[0]
    desk = staff_member(username="desk")

    with (
        time_machine.travel(at(10, 20), tick=False),
        django_assert_num_queries(admission_statements()),
    ):
        admitted = services.check_in(scanned=child.confirmation_code, by=desk).ticket

    assert admitted.pk == child.pk and admitted.date == TODAY
    assert admitted.checked_in_at == at(10, 20) and admitted.checked_in_by == desk
    assert admitted.slot.entry_time == dt.time(10, 30)
    assert (admitted.category.category, admitted.category.check_at_door) == ("child", True)
    child.refresh_from_db()
    assert (child.checked_in_at, child.checked_in_by) == (at(10, 20), desk)


def test_an_allowance_reaching_past_midnight_admits_the_days_last_slot(
    timed_today, settings, django_assert_num_queries
):
    settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES = 15
    # A late opening, until midnight, whose last slot is at 23:55.
    MuseumDay.objects.filter(pk=timed_today.pk).update(closes_at=dt.time.max)
    EntrySlot.objects.create(day=timed_today, entry_time=dt.time(23, 55), capacity=40)
    late = order(("adult", 1), entry_time=dt.time(23, 55)).sold_tickets[0]
    desk = staff_member()

    with (
        time_machine.travel(at(23, 50), tick=False),
        django_assert_num_queries(admission_statements()),
    ):
        admitted = services.check_in(scanned=late.confirmation_code, by=desk).ticket

    assert admitted.checked_in_at == at(23, 50)


def at_the_door(client, ticket, when: dt.datetime) -> str:
    with time_machine.travel(when, tick=False):
        # Signed in at that time: a session from the test's real time would have run out.
        client.force_login(staff_member(username="desk"))
        return client.post("/door/", {"scanned": ticket.confirmation_code}).content.decode()


def test_the_door_page_shows_the_slot_and_asks_for_proof(client, timed_today):
    ticket = order(("child", 1)).sold_tickets[0]

    early = at_the_door(client, ticket, at(10))
    page = at_the_door(client, ticket, at(10, 20))

    assert "REFUSE" in early and "Too early: entry from 10:30" in early
    assert "ADMIT" in page and "from 10:30" in page
    assert "Check proof of age/status: Child (6-17)" in page


def test_an_adult_needs_no_proof(client, timed_today):
    ticket = order(("adult", 1)).sold_tickets[0]

    page = at_the_door(client, ticket, at(10, 20))

    assert "ADMIT" in page and "Check proof" not in page
