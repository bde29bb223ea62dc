"""Offers made at once (a cancellation's, another's, the periodic job's) against a real
PostgreSQL server from real threads: under the drop's row lock a place is offered once."""

import datetime as dt
import threading

import pytest
from django.db import connection
from django.db.models import F

from drops import waiting_list
from drops.models import WaitingEntry
from hours.models import EntrySlot
from orders.models import Voucher
from tests.conftest import client_for
from tests.drops.conftest import buyers, make_drop
from tests.live_http import in_parallel

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def test_eight_triggers_at_once_offer_a_place_that_came_back_once(drops_redis, drop_day):
    EntrySlot.objects.filter(day=drop_day).update(sold=F("capacity"))
    drop = make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    for person in buyers(8):
        client = client_for(person)
        assert client.post(f"/v1.1/drops/{drop.pk}/queue").json()["state"] == "sold_out"
        path = f"/v1.1/drops/{drop.pk}/waiting-list"
        assert client.post(path, {"quantity": 1}, format="json").status_code == 201
    # A place comes back, and nobody has offered it yet.
    EntrySlot.objects.filter(day=drop_day, entry_time=dt.time(10)).update(sold=F("sold") - 1)
    start = threading.Barrier(8)

    def offer() -> int:
        try:
            start.wait()
            return len(waiting_list.offer_freed_places(drop))
        finally:
            connection.close()

    offered = in_parallel(8, offer)

    assert sorted(offered) == [0] * 7 + [1]
    assert Voucher.objects.count() == 1
    first = WaitingEntry.objects.order_by("joined_at", "pk").first()
    assert WaitingEntry.objects.exclude(offered_at=None).get() == first
