"""Receipts' numbers under real concurrency on PostgreSQL: confirmations racing in threads, each
in its own transaction and connection, take consecutive numbers of their series, with no gap and
no duplicate, whether or not some of them roll back after taking one."""

import datetime as dt
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction
from django.utils import timezone

from orders.models import NumberSeries, Order, OrderStatus, SaleDocument
from orders.services.payments import start_payment
from orders.services.receipts import issue_receipt
from orders.services.sale import place_order
from tests.factories import MuseumDayFactory, UserFactory, staff_member

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]

ORDERS = 50


@pytest.fixture(autouse=True)
def one_buyer_holds_them_all(settings):
    settings.MUSEUM_MAX_HELD_PLACES = settings.MUSEUM_MAX_PLACES_PER_DAY = ORDERS


def held_orders(count: int) -> list[Order]:
    """`count` online orders of one adult, held until paid."""
    buyer = UserFactory(username="online")
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2), capacity=None)
    return [
        place_order(
            buyer=buyer,
            email=f"visitor{n}@example.com",
            ticket_type="general",
            ticket_date=day.date,
            lines=[{"category": "adult", "quantity": 1}],
        )
        for n in range(count)
    ]


def all_at_once(jobs) -> list[str]:
    """Run the jobs in threads released together; each one's outcome ("done" or its error)."""
    start = threading.Barrier(len(jobs))

    def run(job):
        try:
            start.wait()
            job()
            return "done"
        except Exception as exc:  # a deadlock or a duplicate number would surface here
            return f"{type(exc).__name__}: {exc}"
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        return list(pool.map(run, jobs))


def numbers() -> list[int]:
    return sorted(
        int(number.split("-")[1])
        for number in SaleDocument.objects.values_list("number", flat=True)
    )


def test_fifty_confirmations_at_once_get_fifty_consecutive_numbers():
    orders = held_orders(ORDERS)
    clerk = staff_member(username="desk")
    assert not NumberSeries.objects.exists()  # the series' first use is part of the race

    outcomes = all_at_once(
        [
            lambda order=order: start_payment(
                order_id=order.pk, by=clerk, provider_name="desk", method="cash"
            )
            for order in orders
        ]
    )

    assert outcomes == ["done"] * ORDERS
    assert Order.objects.filter(status=OrderStatus.CONFIRMED).count() == ORDERS
    assert numbers() == list(range(1, ORDERS + 1))
    assert SaleDocument.objects.values("order").distinct().count() == ORDERS
    year = timezone.localdate().year
    assert NumberSeries.objects.get(prefix="R", year=year).last == ORDERS


def test_confirmations_that_roll_back_after_taking_a_number_leave_no_gap():
    orders = held_orders(ORDERS)
    for order in orders:
        order.status = OrderStatus.CONFIRMED  # as the confirmation sets it, not saved

    def confirm(order: Order, *, fails: bool) -> None:
        with transaction.atomic():
            issue_receipt(order)
            if fails:
                raise RuntimeError("the confirmation fails after its number")

    outcomes = all_at_once(
        [
            lambda order=order, n=n: confirm(order, fails=n % 5 == 0)
            for n, order in enumerate(orders)
        ]
    )

    assert outcomes.count("done") == 40
    assert numbers() == list(range(1, 41))
