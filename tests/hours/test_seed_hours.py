import datetime as dt
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from hours.models import MuseumDay
from hours.services import Hours, apply_weekly_pattern, parse_weekly_pattern
from tests.factories import MuseumDayFactory

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

    assert "0 created, 0 updated, 0 removed, 10 unchanged" in output
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
