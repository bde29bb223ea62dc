"""The weekly pattern and sales on the same days at once, on a real PostgreSQL server: every
writer locks the counted rows in one order (hours.locking), so none waits on another in a
circle, and the counts stay exact."""

import datetime as dt
import threading

import pytest
from django.db import connection
from django.db.models import Count, Q
from django.utils import timezone

from hours.models import EntrySlot, MuseumDay
from hours.services import apply_weekly_pattern
from museum.exceptions import MuseumProblem
from orders.services.sale import place_order
from tests.factories import MuseumDayFactory, partner_member

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]

DAYS = 4
SELLERS = 8
SALES_EACH = 6


def run_together(*jobs) -> list[BaseException]:
    """Run each job in a thread of its own, started at once; what they raised."""
    start_together = threading.Barrier(len(jobs))
    raised: list[BaseException] = []

    def run(job) -> None:
        try:
            start_together.wait()
            job()
        except BaseException as error:  # a deadlock, a lock timeout: what these tests look for
            raised.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return raised


def seller(*, buyer, start: dt.date, first: int):
    def sell() -> None:
        for n in range(SALES_EACH):
            try:
                place_order(
                    buyer=buyer,
                    email="a@example.com",
                    ticket_type="general",
                    ticket_date=start + dt.timedelta(days=(first + n) % DAYS),
                    entry_time=dt.time(10 + n % 3),
                    lines=[{"category": "adult", "quantity": 2}],
                )
            except MuseumProblem:
                pass  # the day or its slot is gone or closed: a refusal, not a failure

    return sell


def test_a_weekly_pattern_and_sales_on_the_same_days_never_deadlock_and_count_exactly():
    start = timezone.localdate() + dt.timedelta(days=7)
    for offset in range(DAYS):
        day = MuseumDayFactory(date=start + dt.timedelta(days=offset), capacity=1000)
        for hour in (10, 11, 12):
            EntrySlot.objects.create(day=day, entry_time=dt.time(hour), capacity=1000)
    buyer = partner_member()
    sellers = [seller(buyer=buyer, start=start, first=n) for n in range(SELLERS)]

    # No weekday open: days without tickets are removed with their slots, days with tickets are
    # closed and keep them.
    raised = run_together(
        *sellers, lambda: apply_weekly_pattern(start=start, days=DAYS, pattern={})
    )

    assert raised == []
    valid = Count("tickets", filter=Q(tickets__cancelled_at__isnull=True))
    for day in MuseumDay.objects.annotate(valid=valid):
        assert day.sold == day.valid and day.is_closed
    for slot in EntrySlot.objects.annotate(valid=valid):
        assert slot.sold == slot.valid
