import datetime as dt

import pytest
from django.utils import timezone

from hours.models import EntrySlot
from tests.factories import MuseumDayFactory


def later(days: int = 3) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


def order_body(day: dt.date, *lines: tuple[str, int], **extra) -> dict:
    return {
        "ticketType": "general",
        "ticketDate": day.isoformat(),
        "email": "family@example.com",
        "lines": [{"category": code, "quantity": n} for code, n in lines or [("adult", 1)]],
        **extra,
    }


@pytest.fixture(autouse=True)
def orders_use_the_database(db):
    """Every test here sells, reads or refuses orders, in the database."""


@pytest.fixture
def open_day(db):
    return MuseumDayFactory(date=later())


@pytest.fixture
def timed_day(db):
    """A day with entry slots at 10:00, 10:30 and 11:00, 4 places each."""
    day = MuseumDayFactory(date=later(), opens_at=dt.time(10), closes_at=dt.time(17))
    for entry in (dt.time(10), dt.time(10, 30), dt.time(11)):
        EntrySlot.objects.create(day=day, entry_time=entry, capacity=4)
    return day
