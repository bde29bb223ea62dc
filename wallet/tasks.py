"""Keeping the passes in the visitors' wallets true: after a change of an order commits (a move,
a cancellation, a confirmation or payment: wallet/receivers.py), a task builds its tickets'
kept passes again and pushes each pass that changed to the devices registered for it.

Everything here runs on the task queue, after the sale's commit and outside any transaction: a
pass is signed and APNs is called with no row locked, and an APNs outage never fails a sale. A
push that APNs could not take now (down, 5xx, 429) is tried again for the devices it missed,
after museum.lost_work.RETRY's wait, until its last attempt; a push lost with its worker is not
(no row of ours keeps its claim): its devices see the change when they next ask.
"""

import logging
from datetime import datetime

from django.utils import timezone
from django_tasks import task

from museum.lost_work import RETRY
from wallet import apple, push
from wallet.models import ApplePass

logger = logging.getLogger("wallet.push")


@task()
def refresh_ticket_passes(*, order_id: str, changed_at: str) -> str:
    """Build again the kept passes of the order's tickets; push those that changed."""
    if not push.configured():
        return "not configured"
    changed = datetime.fromisoformat(changed_at)
    kept = ApplePass.objects.filter(ticket__order_id=order_id).select_related(
        "ticket__order", "ticket__event", "ticket__slot", "ticket__category"
    )
    pushed = 0
    for before in kept:
        if before.ticket is None:  # the filter names tickets' passes only; typed as any pass's
            continue
        current = apple.ticket_apple_pass(ticket=before.ticket)
        # Changed by this build, or by a device's or the visitor's download since the change:
        # either way the devices registered may still hold the pass as it was.
        if current.pazz.updated_at >= changed:
            push_with_retry(pass_id=current.pazz_id, attempt=1)
            pushed += 1
    return f"{pushed} passes pushed"


@task()
def push_pass_update(*, pass_id: int, attempt: int, push_tokens: list[str]) -> str:
    """Another attempt at a pass's push, to the devices an earlier one missed."""
    if not push.configured():
        return "not configured"
    return push_with_retry(pass_id=pass_id, attempt=attempt, only=push_tokens)


def push_with_retry(*, pass_id: int, attempt: int, only: list[str] | None = None) -> str:
    """Push the pass (attempt number `attempt`), and enqueue the next attempt for the devices
    APNs could not take it for."""
    later = push.push_pass(pass_id=pass_id, only=only)
    if not later:
        return "pushed"
    run_after = RETRY.next_run(attempt, now=timezone.now())
    if run_after is None:
        logger.error("Push of pass %s given up after %d attempts", pass_id, attempt)
        return "given up"
    push_pass_update.using(run_after=run_after).enqueue(
        pass_id=pass_id, attempt=attempt + 1, push_tokens=later
    )
    return f"{len(later)} devices again at {run_after.isoformat()}"
