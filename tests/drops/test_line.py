"""The waiting room's line: drawn places before the opening, first come after it, one place per
account and mailbox."""

import datetime as dt

import pytest
import time_machine

from tests.conftest import client_for
from tests.drops.conftest import buyers, make_drop

pytestmark = pytest.mark.django_db


def join(user, drop):
    return client_for(user).post(f"/v1.1/drops/{drop.pk}/queue", {}, format="json")


def poll(user, drop):
    return client_for(user).get(f"/v1.1/drops/{drop.pk}/queue")


def test_who_joins_before_the_opening_is_drawn_a_place(drops_redis, drop_day):
    drop = make_drop(drop_day)
    people = buyers(12)
    for person in people:
        answer = join(person, drop)
        assert answer.status_code == 201
        assert answer.json()["state"] == "pending"
        assert answer.json()["position"] is None
    with time_machine.travel(drop.opens_at + dt.timedelta(seconds=1)):
        positions = [poll(person, drop).json()["position"] for person in people]
    assert sorted(positions) == list(range(1, 13))
    assert positions != list(range(1, 13))  # a draw, not the order they came in
