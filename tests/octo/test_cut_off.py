"""Cut-off as documented: an event's availability closes when the event starts, or without a start
of its own when the museum closes, not at midnight; and the sale refuses it from then on by the same
rule (events.services.sales_end), so a reseller is never shown what a sale would refuse."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from tests.factories import MuseumDayFactory, SpecialEventFactory
from tests.octo.conftest import later

DAY = later(5)


def at(hour: int, minute: int = 0) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(DAY, dt.time(hour, minute)))


def utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def museum_day(db):
    return MuseumDayFactory(date=DAY, opens_at=dt.time(10), closes_at=dt.time(17))


def availability(octo, event) -> dict:
    body = {"productId": str(event.pk), "optionId": "DEFAULT", "localDate": DAY.isoformat()}
    [found] = octo.post("/octo/availability", body, format="json").json()
    return found


def reserve(octo, event):
    body = {
        "productId": str(event.pk),
        "optionId": "DEFAULT",
        "availabilityId": at(0).isoformat(),
        "unitItems": [{"unitId": "adult"}],
    }
    return octo.post("/octo/bookings", body, format="json")


@pytest.mark.parametrize(
    ("starts_at", "cutoff"),
    [(dt.time(19), (19, 0)), (None, (17, 0))],
    ids=["its start", "closing"],
)
def test_an_events_availability_closes_at_its_cut_off(octo, museum_day, starts_at, cutoff):
    event = SpecialEventFactory(dates=[DAY], starts_at=starts_at)
    closes = at(*cutoff)

    with time_machine.travel(closes - dt.timedelta(minutes=1), tick=False):
        before = availability(octo, event)
        assert (before["status"], before["available"]) == ("AVAILABLE", True)
        assert before["utcCutoffAt"] == utc(closes)

    with time_machine.travel(closes, tick=False):
        after = availability(octo, event)
        assert (after["status"], after["available"]) == ("CLOSED", False)
        assert after["utcCutoffAt"] == utc(closes)
        refused = reserve(octo, event)
        assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
        assert "no longer sold" in refused.json()["errorMessage"]


def test_the_sale_refuses_an_event_from_its_start(visitor_client, museum_day):
    event = SpecialEventFactory(dates=[DAY], starts_at=dt.time(11))
    body = {
        "ticketType": "event",
        "eventId": str(event.pk),
        "ticketDate": DAY.isoformat(),
        "email": "family@example.com",
        "lines": [{"category": "adult", "quantity": 1}],
    }

    with time_machine.travel(at(10, 59), tick=False):
        assert visitor_client.post("/v1.1/orders", body, format="json").status_code == 201
    with time_machine.travel(at(11), tick=False):
        refused = visitor_client.post("/v1.1/orders", body, format="json")
    assert refused.status_code == 409
    assert refused.json()["type"].endswith("sale_ended")


def test_a_slots_availability_past_its_cut_off_is_closed(octo, timed_day):
    body = {"productId": "general", "optionId": "DEFAULT", "localDate": timed_day.date.isoformat()}
    ten = timezone.make_aware(dt.datetime.combine(timed_day.date, dt.time(10)))

    with time_machine.travel(ten + dt.timedelta(minutes=31), tick=False):
        slots = octo.post("/octo/availability", body, format="json").json()
        calendar = octo.post(
            "/octo/availability/calendar",
            {**body, "localDateStart": body["localDate"], "localDateEnd": body["localDate"]},
            format="json",
        ).json()

    # 10:00 is sold until 10:30 begins: closed, not sold out; the later ones are on sale.
    assert [(slot["status"], slot["available"]) for slot in slots] == [
        ("CLOSED", False),
        ("AVAILABLE", True),
        ("AVAILABLE", True),
    ]
    assert calendar[0]["available"] is True
