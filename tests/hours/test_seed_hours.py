import datetime as dt
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import ProtectedError

from hours.models import MuseumDay
from hours.services import (
    CLOSED_BY_PATTERN,
    Hours,
    apply_weekly_pattern,
    parse_weekly_pattern,
)
from orders.exceptions import SoldOut
from orders.models import Ticket
from orders.services.sale import buy_ticket
from tests.factories import MuseumDayFactory, partner_member

MONDAY = dt.date(2030, 1, 7)


def seed(*args) -> str:
    out = StringIO()
    call_command("seed_hours", *args, stdout=out)
    return out.getvalue()


def test_the_default_pattern_opens_weekdays_and_closes_weekends(db):
    output = seed("--start", MONDAY.isoformat(), "--days", "7")

    days = {day.date.weekday(): day for day in MuseumDay.objects.all()}
    assert sorted(days) == [0, 1, 2, 3, 4]
    assert (days[0].opens_at, days[0].closes_at) == (dt.time(9), dt.time(18))
    assert (days[4].opens_at, days[4].closes_at) == (dt.time(10), dt.time(16))
    assert "5 created" in output


def test_seeding_twice_changes_nothing(db):
    seed("--start", MONDAY.isoformat(), "--days", "14")

    output = seed("--start", MONDAY.isoformat(), "--days", "14")

    assert "0 created, 0 updated, 0 closed with tickets sold, 0 removed, 10 unchanged" in output
    assert MuseumDay.objects.count() == 10


def test_staff_edits_survive_unless_overwriting_is_asked_for(db):
    MuseumDayFactory(date=MONDAY, opens_at=dt.time(12), closes_at=dt.time(14), edited_by_staff=True)
    MuseumDayFactory(
        date=MONDAY + dt.timedelta(days=1),
        is_closed=True,
        opens_at=None,
        closes_at=None,
        edited_by_staff=True,
    )

    output = seed("--start", MONDAY.isoformat(), "--days", "2")

    assert "2 staff edits kept" in output
    assert MuseumDay.objects.get(date=MONDAY).opens_at == dt.time(12)
    assert MuseumDay.objects.get(date=MONDAY + dt.timedelta(days=1)).is_closed

    seed("--start", MONDAY.isoformat(), "--days", "2", "--overwrite-staff-edits")

    assert MuseumDay.objects.get(date=MONDAY).opens_at == dt.time(9)
    assert not MuseumDay.objects.get(date=MONDAY + dt.timedelta(days=1)).is_closed


def test_a_new_pattern_moves_seeded_days_and_removes_newly_closed_ones(db):
    seed("--start", MONDAY.isoformat(), "--days", "7")

    seed("--start", MONDAY.isoformat(), "--days", "7", "--pattern", "tue-sun 10:00-17:00")

    days = MuseumDay.objects.all()
    assert [day.date.weekday() for day in days] == [1, 2, 3, 4, 5, 6]
    assert {(day.opens_at, day.closes_at) for day in days} == {(dt.time(10), dt.time(17))}


def test_parse_weekly_pattern_reads_ranges_and_single_days():
    pattern = parse_weekly_pattern("mon-wed 09:00-17:00, sat 11:00-15:30")

    assert pattern == {
        0: Hours(dt.time(9), dt.time(17)),
        1: Hours(dt.time(9), dt.time(17)),
        2: Hours(dt.time(9), dt.time(17)),
        5: Hours(dt.time(11), dt.time(15, 30)),
    }


@pytest.mark.parametrize(
    "text",
    ["monday 09:00-17:00", "mon 9-17", "mon 18:00-09:00", "mon 24:00-25:00", "fri-mon 09:00-17:00"],
)
def test_parse_weekly_pattern_says_what_is_wrong(text):
    with pytest.raises(ValueError):
        parse_weekly_pattern(text)


@pytest.mark.parametrize(
    "args",
    [["--days", "0"], ["--days", "100000"], ["--pattern", "every day"]],
)
def test_the_command_refuses_bad_options(db, args):
    with pytest.raises(CommandError):
        seed(*args)


def test_apply_weekly_pattern_counts_what_it_did(db):
    summary = apply_weekly_pattern(
        start=MONDAY, days=3, pattern=parse_weekly_pattern("mon 09:00-10:00")
    )

    assert (summary.created, summary.removed, summary.unchanged) == (1, 0, 0)


def test_capacity_applies_to_the_days_seeded(db):
    seed("--start", MONDAY.isoformat(), "--days", "2", "--capacity", "250")

    assert set(MuseumDay.objects.values_list("capacity", flat=True)) == {250}


def test_a_long_range_shows_its_progress_and_a_short_one_does_not(db):
    long = seed("--start", MONDAY.isoformat(), "--days", "365")
    short = seed("--start", MONDAY.isoformat(), "--days", "14")

    assert "37/365 days" in long and "365/365 days" in long
    assert "/14 days" not in short


# Days with tickets sold


def sell_out(day: dt.date, *, places: int = 1) -> list:
    """A general-entry day with its places all bought through the purchase rules."""
    MuseumDayFactory(date=day, capacity=places)
    buyer = partner_member()
    return [
        buy_ticket(buyer=buyer, ticket_type="general", ticket_date=day, email="a@example.com")
        for _ in range(places)
    ]


def test_a_pattern_closing_a_day_with_tickets_sold_closes_it_and_keeps_count_and_tickets(db):
    tickets = sell_out(MONDAY, places=2)

    output = seed("--start", MONDAY.isoformat(), "--days", "7", "--pattern", "tue-fri 09:00-17:00")

    day = MuseumDay.objects.get(date=MONDAY)
    assert (day.is_closed, day.sold, day.capacity) == (True, 2, 2)
    assert day.note == CLOSED_BY_PATTERN
    assert set(day.tickets.values_list("pk", flat=True)) == {ticket.pk for ticket in tickets}
    assert "1 closed with tickets sold, 0 removed" in output
    assert "2 ticket(s) are sold for the 1 day(s) the pattern closes" in output


def test_reopening_a_weekday_does_not_sell_a_closed_days_places_again(db):
    sell_out(MONDAY)
    seed("--start", MONDAY.isoformat(), "--days", "7", "--pattern", "tue-fri 09:00-17:00")

    output = seed("--start", MONDAY.isoformat(), "--days", "7", "--pattern", "mon-fri 09:00-17:00")

    day = MuseumDay.objects.get(date=MONDAY)
    assert (day.is_closed, day.sold, day.capacity, day.note) == (False, 1, 1, "")
    assert "ticket(s) are sold" not in output
    with pytest.raises(SoldOut):
        buy_ticket(
            buyer=partner_member(), ticket_type="general", ticket_date=MONDAY, email="b@example.com"
        )
    assert Ticket.objects.filter(date=MONDAY).count() == 1


def test_a_day_closed_for_its_tickets_stays_closed_on_the_next_run(db):
    sell_out(MONDAY)
    seed("--start", MONDAY.isoformat(), "--days", "7", "--pattern", "tue-fri 09:00-17:00")

    output = seed("--start", MONDAY.isoformat(), "--days", "7", "--pattern", "tue-fri 09:00-17:00")

    assert "0 closed with tickets sold, 0 removed, 5 unchanged" in output
    assert "ticket(s) are sold" not in output
    assert MuseumDay.objects.get(date=MONDAY).is_closed


def test_a_closed_weekday_without_tickets_is_still_removed(db):
    MuseumDayFactory(date=MONDAY, capacity=5)

    summary = apply_weekly_pattern(
        start=MONDAY, days=1, pattern=parse_weekly_pattern("tue-fri 09:00-17:00")
    )

    assert (summary.removed, summary.closed_with_tickets) == (1, 0)
    assert not MuseumDay.objects.filter(date=MONDAY).exists()


def test_a_museum_day_with_tickets_cannot_be_deleted(db):
    sell_out(MONDAY)

    with pytest.raises(ProtectedError):
        MuseumDay.objects.filter(date=MONDAY).delete()

    assert MuseumDay.objects.get(date=MONDAY).sold == 1
