"""Parallel buyers and scanners against a real PostgreSQL server, through real HTTP requests."""

import datetime as dt
import threading
import time
from collections import Counter

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from hours.locking import take_places
from hours.models import MuseumDay
from orders.exceptions import UnknownEvent
from orders.models import Ticket
from orders.services.sale import buy_ticket
from tests.factories import (
    MuseumDayFactory,
    SpecialEventFactory,
    TicketFactory,
    partner_member,
    staff_member,
)
from tests.live_http import in_parallel, post, sign_in

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def test_fifty_parallel_buyers_get_exactly_ten_places(live_server, settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {  # one account buys fifty times at once
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**rates, "purchase": "1000/min"},
    }
    partner_member(username="visitor")
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2), capacity=10)
    body = {"ticketType": "general", "ticketDate": day.date.isoformat(), "email": "a@example.com"}
    sign_in(live_server.url, username="visitor")

    answers = in_parallel(50, lambda: post(f"{live_server.url}/v1.1/tickets", body, "visitor"))

    assert Counter(status for status, _ in answers) == {201: 10, 409: 40}
    assert {problem["reason"] for status, problem in answers if status == 409} == {"sold_out"}
    assert Ticket.objects.count() == 10
    assert MuseumDay.objects.get(pk=day.pk).sold == 10


def test_two_scanners_at_once_admit_a_ticket_once(live_server):
    staff_member(username="staff")
    buyer = partner_member(username="visitor")
    day = MuseumDayFactory(date=timezone.localdate())
    ticket = TicketFactory(buyer=buyer, date=day.date)
    scan = {"code": ticket.confirmation_code}
    sign_in(live_server.url, username="staff")

    answers = in_parallel(
        8, lambda: post(f"{live_server.url}/v1.1/tickets/check-in", scan, "staff")
    )

    assert sorted(status for status, _ in answers) == [200] + [409] * 7
    assert {problem.get("reason") for status, problem in answers if status == 409} == {
        "already_checked_in"
    }


def race_two_buyers(buy_last_place) -> list[bool]:
    """Both buyers read the day before either writes: the interleaving that oversells."""
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2), capacity=1)
    both_have_read = threading.Barrier(2, timeout=10)

    def buyer():
        try:
            with transaction.atomic():
                seen = MuseumDay.objects.get(pk=day.pk)
                both_have_read.wait()
                return buy_last_place(seen)
        finally:
            connection.close()

    return in_parallel(2, buyer)


def test_without_the_conditional_update_the_last_place_sells_twice():
    def read_then_write(seen):
        if seen.sold >= seen.capacity:
            return False
        MuseumDay.objects.filter(pk=seen.pk).update(sold=seen.sold + 1)
        return True

    assert race_two_buyers(read_then_write) == [True, True]


def test_with_the_conditional_update_the_last_place_sells_once():
    def conditional_update(seen):
        # The counting every sale runs: None when it counted, else the kind of row that was full.
        return take_places(n=1, days=MuseumDay.objects.filter(pk=seen.pk)) is None

    assert sorted(race_two_buyers(conditional_update)) == [False, True]


def wait_until_a_connection_waits_for_a_lock() -> None:
    """Poll PostgreSQL until a backend of this database is waiting on a lock (10 s at most)."""
    deadline = time.monotonic() + 10
    watcher = connections.create_connection("default")
    try:
        with watcher.cursor() as cursor:
            while time.monotonic() < deadline:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
                if cursor.fetchone()[0]:
                    return
                time.sleep(0.01)
    finally:
        watcher.close()
    raise AssertionError("no connection came to wait for a lock")


def test_a_purchase_waits_for_its_events_cancellation_and_then_sells_nothing():
    day = timezone.localdate() + dt.timedelta(days=2)
    event = SpecialEventFactory(dates=[day])
    buyer = partner_member(username="visitor")
    # A cancellation in progress elsewhere: the event's row locked and changed, not committed.
    canceller = connections.create_connection("default")
    canceller.set_autocommit(False)
    with canceller.cursor() as cursor:
        cursor.execute(
            "UPDATE events_specialevent SET cancelled_at = now() WHERE id = %s", [event.pk]
        )
    outcome = []

    def buy():
        try:
            buy_ticket(
                buyer=buyer,
                ticket_type="event",
                ticket_date=day,
                email="a@example.com",
                event_id=event.pk,
            )
            outcome.append("sold")
        except UnknownEvent:
            outcome.append("no such event")
        finally:
            connection.close()

    purchase = threading.Thread(target=buy)
    purchase.start()
    try:
        # Without the event's row lock the purchase would read the event as it was, not wait.
        wait_until_a_connection_waits_for_a_lock()
    finally:
        canceller.commit()
        canceller.close()
        purchase.join(timeout=10)

    assert outcome == ["no such event"]
    assert not Ticket.objects.exists()
