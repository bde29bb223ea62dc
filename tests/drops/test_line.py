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


def test_the_draw_is_the_seeds(drops_redis, drop_day):
    """A rehearsal with a seed draws the same places again; another seed, others."""
    people = buyers(12)
    drops = [make_drop(drop_day, seed=seed) for seed in (7, 7, 8)]
    for drop in drops:
        for person in people:
            join(person, drop)
    with time_machine.travel(drops[0].opens_at + dt.timedelta(seconds=1)):
        draws = [[poll(person, drop).json()["position"] for person in people] for drop in drops]
    assert draws[0] == draws[1]
    assert draws[0] != draws[2]


def test_a_poll_says_how_soon_to_ask_again(drops_redis, drop_day):
    drop = make_drop(drop_day, outflow_per_minute=6)
    people = buyers(30)
    for person in people:
        join(person, drop)
    with time_machine.travel(drop.opens_at + dt.timedelta(seconds=1), tick=False):
        places = {poll(person, drop).json()["position"]: person for person in people}
        last = poll(places[30], drop).json()
    # 29 ahead at 6 a minute: about five minutes; ask again in half of it, at most 2 minutes.
    assert last["state"] == "waiting"
    assert last["ahead"] == 29
    assert last["estimatedWaitSeconds"] == 290
    assert last["pollAfterSeconds"] == 120
    first = poll(places[1], drop).json()
    assert (first["ahead"], first["pollAfterSeconds"]) == (0, 2)
