"""Parallel orders against a real PostgreSQL server, through real HTTP requests."""

import datetime as dt
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.utils import timezone

from hours.models import EntrySlot, MuseumDay
from orders.models import Order, OrderStatus, Payment, Ticket
from orders.services.cancellation import cancel_order
from orders.services.holds import release_expired_holds
from orders.services.sale import place_order
from tests.factories import MuseumDayFactory, UserFactory, partner_member
from tests.live_http import in_parallel, post, sign_in
from tests.orders.conftest import order_body

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def unthrottled_purchases(settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {  # one account orders fifty times at once
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**rates, "purchase": "1000/min"},
    }


def test_fifty_parallel_orders_of_three_fill_a_slot_of_twenty_with_six(
    live_server, unthrottled_purchases
):
    partner_member(username="visitor")
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2), capacity=100)
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10, 30), capacity=20)
    body = order_body(day.date, ("adult", 2), ("child", 1), entryTime="10:30")
    sign_in(live_server.url, username="visitor")

    answers = in_parallel(50, lambda: post(f"{live_server.url}/v1.1/orders", body, "visitor"))

    assert Counter(status for status, _ in answers) == {201: 6, 409: 44}
    refusals = [problem for status, problem in answers if status == 409]
    assert {problem["reason"] for problem in refusals} == {"sold_out"}
    assert {problem["available"] for problem in refusals} == {2}
    assert Order.objects.count() == 6 and Ticket.objects.count() == 18
    assert EntrySlot.objects.get(pk=slot.pk).sold == 18
    assert MuseumDay.objects.get(pk=day.pk).sold == 18


def test_orders_cancellations_and_releases_at_once_never_deadlock():
    """Writers of the same slot and day rows, each kind in its own lock order."""
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=3), capacity=60)
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(11), capacity=30)
    buyer = partner_member(username="visitor")

    def buy(hold=False):
        return place_order(
            buyer=buyer,
            email="a@example.com",
            ticket_type="general",
            ticket_date=day.date,
            entry_time=slot.entry_time,
            lines=[{"category": "adult", "quantity": 2}],
            hold=hold,
        )

    to_cancel = [buy() for _ in range(5)]
    expired = [buy(hold=True).pk for _ in range(5)]
    Order.objects.filter(pk__in=expired).update(
        hold_expires_at=timezone.now() - dt.timedelta(minutes=1)
    )
    jobs = [
        *(lambda order=order: cancel_order(order_id=order.pk, by=buyer) for order in to_cancel),
        *(release_expired_holds for _ in range(5)),
        *(buy for _ in range(10)),
    ]

    def run(job):
        try:
            job()
            return "done"
        except Exception as exc:  # a deadlock would surface here as an OperationalError
            return type(exc).__name__
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        outcomes = list(pool.map(run, jobs))

    assert set(outcomes) <= {"done", "SoldOut"}, outcomes
    confirmed = Ticket.objects.filter(cancelled_at__isnull=True, order__status="confirmed")
    assert EntrySlot.objects.get(pk=slot.pk).sold == confirmed.count()
    assert MuseumDay.objects.get(pk=day.pk).sold == confirmed.count()
    assert not Order.objects.filter(status=OrderStatus.HELD).exists()


def test_parallel_contract_purchases_on_a_timed_day_fill_its_slots_in_order(
    live_server, unthrottled_purchases
):
    partner_member(username="visitor")
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2))
    early = EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=10)
    late = EntrySlot.objects.create(day=day, entry_time=dt.time(11), capacity=10)
    body = {"ticketType": "general", "ticketDate": day.date.isoformat(), "email": "a@example.com"}
    sign_in(live_server.url, username="visitor")

    answers = in_parallel(30, lambda: post(f"{live_server.url}/v1.1/tickets", body, "visitor"))

    assert Counter(status for status, _ in answers) == {201: 20, 409: 10}
    assert EntrySlot.objects.get(pk=early.pk).sold == EntrySlot.objects.get(pk=late.pk).sold == 10
    assert Ticket.objects.filter(slot=early).count() == Ticket.objects.filter(slot=late).count()
    assert MuseumDay.objects.get(pk=day.pk).sold == 20


def test_parallel_payment_starts_of_one_order_start_one_payment(live_server):
    buyer = UserFactory(username="online")
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2))
    order = place_order(
        buyer=buyer,
        email="a@example.com",
        ticket_type="general",
        ticket_date=day.date,
        lines=[{"category": "adult", "quantity": 1}],
    )
    sign_in(live_server.url, username="online")
    url = f"{live_server.url}/v1.1/orders/{order.pk}/payments"

    answers = in_parallel(10, lambda: post(url, {"provider": "demo"}, "online"))

    assert {status for status, _ in answers} == {201}
    assert len({payment["paymentId"] for _, payment in answers}) == 1
    assert Payment.objects.filter(order=order).count() == 1
