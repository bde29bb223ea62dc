"""Work that an attempt claimed and never finished, enqueued again: one retry policy and one
requeue for every kind of background work that calls out (an order's email, a refund, a webhook
delivery).

Each kind keeps its work on a row. An attempt claims the row with one conditional UPDATE (the
work still due, the attempt number before its own, and when it claimed it), commits, then does
the slow part outside any transaction (render, send, call a provider), then writes the outcome.
An attempt that dies with its worker (django-tasks leaves its result running forever) leaves
its row claimed; each kind's periodic sweep hands its claimed rows to `requeue_lost`, which
takes back the claims older than LOST_AFTER and enqueues the next attempt, like a failed one:
RETRY's wait later, or gives up after its last attempt. A worker killed between the queue
handing out a task and the task's first statement (its claim) leaves no claim to find: the
window is that one statement.

This layer names no app: the apps pass their rows and their enqueueing.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from django.db import transaction
from django.db.models import Model, QuerySet
from django.utils import timezone

Work = TypeVar("Work", bound=Model)


@dataclass(frozen=True)
class RetryPolicy:
    """How long the next attempt waits after a failed or lost one, and how many are made."""

    first_wait: timedelta
    longest_wait: timedelta
    attempts: int

    def wait(self, attempt: int) -> timedelta:
        """The wait after attempt number `attempt` failed: doubling from the first."""
        return min(self.first_wait * 2 ** (attempt - 1), self.longest_wait)

    def next_run(self, attempt: int, *, now: datetime) -> datetime | None:
        """When the attempt after attempt number `attempt` runs; None once it was the last."""
        return None if attempt >= self.attempts else now + self.wait(attempt)


# 1, 2, 4, ... minutes, at most an hour apart, for 30 attempts: about a day.
RETRY = RetryPolicy(first_wait=timedelta(minutes=1), longest_wait=timedelta(hours=1), attempts=30)
# An attempt claimed this long ago and not finished died with its worker: far longer than one
# can take (a mail server's or a provider's timeout is 10 s a call).
LOST_AFTER = timedelta(minutes=5)


def requeue_lost(
    claimed: QuerySet[Work],
    *,
    attempt_field: str,
    claimed_at_field: str,
    enqueue: Callable[[Work, int, datetime], None],
    give_up: Callable[[Work], None],
    limit: int = 500,
) -> int:
    """Enqueue again the work of `claimed` (rows claimed by an attempt that has not written its
    outcome) whose claim is older than LOST_AFTER; how many were taken back.

    Each claim is taken back with a conditional UPDATE on its attempt and claim time (cleared),
    so two sweeps at once take it once; then, in the same transaction, `enqueue(row, attempt,
    run_after)` enqueues the next attempt, or `give_up(row)` records the end after RETRY's last.
    """
    now = timezone.now()
    stale = claimed.filter(**{f"{claimed_at_field}__lt": now - LOST_AFTER})
    taken = 0
    for row in stale.order_by(claimed_at_field)[:limit]:
        attempt = getattr(row, attempt_field)
        claim = {attempt_field: attempt, claimed_at_field: getattr(row, claimed_at_field)}
        with transaction.atomic():
            if not claimed.filter(pk=row.pk, **claim).update(**{claimed_at_field: None}):
                continue  # finished meanwhile, or another sweep took it
            run_after = RETRY.next_run(attempt, now=now)
            if run_after is None:
                give_up(row)
            else:
                enqueue(row, attempt + 1, run_after)
        taken += 1
    return taken
