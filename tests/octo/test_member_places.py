"""Resellers see what the public may buy: a slot's places kept for members are not for sale to them
until the cut-off."""

import datetime as dt

from hours.models import EntrySlot
from tests.octo.conftest import reserve_body, slot_id


def availability(octo, day: dt.date) -> list[tuple[str, int]]:
    slots = octo.post(
        "/octo/availability",
        {
            "productId": "general",
            "optionId": "DEFAULT",
            "localDateStart": day.isoformat(),
            "localDateEnd": day.isoformat(),
        },
        format="json",
    ).json()
    return [(slot["id"], slot["vacancies"]) for slot in slots]


def test_kept_member_places_are_not_a_resellers_to_sell(octo, timed_day):
    EntrySlot.objects.filter(day=timed_day, entry_time=dt.time(10)).update(member_places=3)

    assert availability(octo, timed_day.date)[0] == (slot_id(timed_day.date, 10), 1)
    refused = octo.post(
        "/octo/bookings", reserve_body(timed_day.date, "adult", "adult"), format="json"
    )
    assert refused.status_code >= 400
    booked = octo.post("/octo/bookings", reserve_body(timed_day.date, "adult"), format="json")
    assert booked.status_code == 200, booked.json()
    assert availability(octo, timed_day.date)[0] == (slot_id(timed_day.date, 10), 0)
