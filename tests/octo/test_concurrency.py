"""Resellers racing for a slot's last places, through real HTTP requests on PostgreSQL."""

import datetime as dt
import json
import urllib.error
import urllib.request
from collections import Counter

import pytest
from django.utils import timezone

from hours.models import EntrySlot
from octo.keys import issue_api_key
from octo.models import Booking
from orders.models import Order, OrderStatus, Ticket
from tests.factories import MuseumDayFactory, partner_member
from tests.live_http import in_parallel
from tests.octo.conftest import B1, reserve_body, uid

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def post(url: str, body: dict, key: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        url,
        method="POST",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_two_resellers_racing_for_the_last_places(live_server):
    day = MuseumDayFactory(
        date=timezone.localdate() + dt.timedelta(days=2), opens_at=dt.time(9), closes_at=dt.time(17)
    )
    EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=3)
    keys = [
        issue_api_key(account=partner_member(username=f"reseller{n}"), name="race")[1]
        for n in range(2)
    ]
    bodies = [reserve_body(day.date, "adult", "adult", uuid=uid(f"race-{n}")) for n in range(2)]
    turns = iter(range(2))

    answers = in_parallel(
        2,
        lambda: (lambda n: post(f"{live_server.url}/octo/bookings", bodies[n], keys[n]))(
            next(turns)
        ),
    )

    assert Counter(status for status, _ in answers) == {200: 1, 400: 1}
    assert {answer.get("error") for _, answer in answers} == {None, "UNPROCESSABLE_ENTITY"}
    assert EntrySlot.objects.get(day=day).sold == 2
    assert Ticket.objects.count() == 2


def test_two_confirmations_after_the_hold_ran_out_place_one_order(live_server):
    day = MuseumDayFactory(
        date=timezone.localdate() + dt.timedelta(days=2), opens_at=dt.time(9), closes_at=dt.time(17)
    )
    EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=10)
    key = issue_api_key(account=partner_member(username="reseller"), name="race")[1]
    url = f"{live_server.url}/octo/bookings"
    assert post(url, reserve_body(day.date, "adult", "adult"), key)[0] == 200
    Order.objects.update(hold_expires_at=timezone.now() - dt.timedelta(minutes=1))

    answers = in_parallel(4, lambda: post(f"{url}/{B1}/confirm", {}, key))

    assert {answer.get("status") or answer["error"] for _, answer in answers} == {"CONFIRMED"}, (
        answers
    )
    assert Order.objects.filter(status=OrderStatus.CONFIRMED).count() == 1
    assert Booking.objects.get().order.status == OrderStatus.CONFIRMED
    assert EntrySlot.objects.get(day=day).sold == 2
