import datetime as dt
import uuid as uuid_module

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from hours.models import EntrySlot
from octo.keys import issue_api_key
from tests.factories import MuseumDayFactory, partner_member


def uid(name: str) -> str:
    """A booking's uuid, named for the test's reader: "b-1" becomes the same UUID each time."""
    return str(uuid_module.uuid5(uuid_module.NAMESPACE_URL, name))


B1 = uid("b-1")


def later(days: int = 3) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


def octo_client(partner) -> APIClient:
    _, key = issue_api_key(account=partner, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def slot_id(day: dt.date, hour: int, minute: int = 0) -> str:
    return timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute))).isoformat()


def reserve_body(day: dt.date, *units: str, uuid: str = B1, hour: int = 10, **extra) -> dict:
    return {
        "uuid": uuid,
        "productId": "general",
        "optionId": "DEFAULT",
        "availabilityId": slot_id(day, hour),
        "unitItems": [{"unitId": unit} for unit in units or ("adult",)],
        **extra,
    }


@pytest.fixture(autouse=True)
def octo_uses_the_database(db):
    """Every test here reads or sells through OCTO, in the database."""


@pytest.fixture
def partner(db):
    return partner_member(username="reseller")


@pytest.fixture
def octo(partner):
    return octo_client(partner)


@pytest.fixture
def timed_day(db):
    """A day with entry slots at 10:00, 10:30 and 11:00, 4 places each."""
    day = MuseumDayFactory(date=later(), opens_at=dt.time(10), closes_at=dt.time(17))
    for entry in (dt.time(10), dt.time(10, 30), dt.time(11)):
        EntrySlot.objects.create(day=day, entry_time=entry, capacity=4)
    return day
