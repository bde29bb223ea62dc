"""Timed entry: slots made by seeding and the admin's form, and read through the API."""

import datetime as dt

import pytest
from django.core.management import call_command
from django.utils import timezone

from hours.models import EntrySlot
from orders.services.sale import place_order
from tests.factories import MuseumDayFactory, partner_member

MONDAY = dt.date(2030, 1, 7)


def slot_times(day: dt.date) -> list[str]:
    slots = EntrySlot.objects.filter(day_id=day).order_by("entry_time")
    return [f"{slot.entry_time:%H:%M}" for slot in slots]


def test_seeding_with_slot_minutes_splits_each_open_day_into_slots(db):
    call_command(
        "seed_hours",
        "--start", "2030-01-07", "--days", "7",
        "--pattern", "mon-fri 10:00-12:00",
        "--slot-minutes", "30", "--slot-capacity", "40",
        verbosity=0,
    )  # fmt: skip

    assert slot_times(MONDAY) == ["10:00", "10:30", "11:00", "11:30"]
    assert set(EntrySlot.objects.values_list("capacity", flat=True)) == {40}
    assert EntrySlot.objects.count() == 5 * 4  # Saturday and Sunday are closed


def test_seeding_again_keeps_the_slots_a_day_has(db):
    call_command("seed_hours", "--start", "2030-01-07", "--days", "1",
                 "--pattern", "mon 10:00-11:00", "--slot-minutes", "30", verbosity=0)  # fmt: skip
    EntrySlot.objects.filter(entry_time=dt.time(10)).update(sold=3)

    call_command("seed_hours", "--start", "2030-01-07", "--days", "1",
                 "--pattern", "mon 10:00-11:00", "--slot-minutes", "20", verbosity=0)  # fmt: skip

    assert slot_times(MONDAY) == ["10:00", "10:30"]
    assert EntrySlot.objects.get(entry_time=dt.time(10)).sold == 3


def test_the_admins_weekly_pattern_form_makes_slots(desk_client):
    answer = desk_client.post(
        "/admin/hours/museumday/apply-pattern/",
        {
            "start": "2030-01-07",
            "days": "1",
            "pattern": "mon 10:00-11:00",
            "slot_minutes": "15",
            "slot_capacity": "10",
        },
    )

    assert answer.status_code == 302
    assert slot_times(MONDAY) == ["10:00", "10:15", "10:30", "10:45"]


@pytest.fixture
def timed_day(db):
    day = MuseumDayFactory(
        date=timezone.localdate() + dt.timedelta(days=2),
        opens_at=dt.time(10),
        closes_at=dt.time(12),
    )
    EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=40)
    EntrySlot.objects.create(day=day, entry_time=dt.time(11), capacity=None)
    return day


def test_a_days_slots_say_how_many_places_are_left(visitor_client, timed_day):
    EntrySlot.objects.filter(entry_time=dt.time(10)).update(sold=28)

    answer = visitor_client.get(f"/v1.1/museum-hours/{timed_day.date}/slots")

    assert answer.status_code == 200
    assert answer.json() == [
        {"entryTime": "10:00", "capacity": 40, "available": 12, "over": False},
        {"entryTime": "11:00", "capacity": None, "available": None, "over": False},
    ]


def test_an_untimed_day_has_no_slots_and_a_closed_day_is_404(visitor_client):
    open_day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2))
    closed = MuseumDayFactory(date=open_day.date + dt.timedelta(days=1), is_closed=True)

    assert visitor_client.get(f"/v1.1/museum-hours/{open_day.date}/slots").json() == []
    assert visitor_client.get(f"/v1.1/museum-hours/{closed.date}/slots").status_code == 404
    assert visitor_client.get("/v1.1/museum-hours/2030-02-30/slots").status_code == 400
    assert visitor_client.get(f"/v1.1/museum-hours/{open_day.date}/slots?x=1").status_code == 400


def test_a_sale_is_seen_at_once_by_the_shared_slots_answer(
    visitor_client, visitor, timed_day, response_cache, django_assert_max_num_queries
):
    url = f"/v1.1/museum-hours/{timed_day.date}/slots"
    assert visitor_client.get(url).json()[0]["available"] == 40
    with django_assert_max_num_queries(1):  # the account; the answer comes from the cache
        assert visitor_client.get(url).json()[0]["available"] == 40

    place_order(
        buyer=partner_member(),
        email="a@example.com",
        ticket_type="general",
        ticket_date=timed_day.date,
        entry_time=dt.time(10),
        lines=[{"category": "adult", "quantity": 3}],
    )

    assert visitor_client.get(url).json()[0]["available"] == 37


def test_slots_need_an_account(anonymous_client, timed_day):
    assert anonymous_client.get(f"/v1.1/museum-hours/{timed_day.date}/slots").status_code == 401
