"""An order's confirmation email: the one email pipeline of every sale.

The email's task is enqueued in the order's (or the confirmation's) transaction, on django-tasks'
database backend, so a rolled-back order sends nothing and a committed one is never lost; the
sale does not wait for it (making the tickets' PDF costs more than the rest of a sale).
django-tasks has no retries, so a failed attempt enqueues the next itself, `retry_wait` later,
for MAX_ATTEMPTS attempts (about a day); the order records when its email went
(`confirmation_sent_at`) and which attempt is waiting or running (`confirmation_task_id`).

The email says what the order holds when it is sent: enqueued again after a change (a move, a
cancellation, money going back: orders.services.payments.mail_change), it tells the change; a
confirmed order cancelled whole is told that, and what goes back. A hold let go was never
confirmed to anyone, and gets nothing.

Never sent twice: an attempt holds the order's row lock from reading it until its outcome is
written, so a second task for the same order waits and then finds it sent. Delivery is at least
once: an attempt that died with its worker (django-tasks leaves its result running forever) is
enqueued again by the periodic task `resend_lost_order_confirmations`, once it is LOST_AFTER
late.
"""

import logging
import uuid
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks.exceptions import TaskResultDoesNotExist

from museum import metrics
from museum.context import bound, current_request_id
from museum.periodic import schedule_periodic_tasks
from orders.models import ANONYMISED_EMAIL, Order, OrderStatus, Payment, RefundSource
from orders.notifications import describe_mail_error, send_not_placed, send_order_confirmation

logger = logging.getLogger(__name__)

FIRST_RETRY = timedelta(minutes=1)
LONGEST_WAIT = timedelta(hours=1)
MAX_ATTEMPTS = 30  # about a day of tries
# An attempt is due within seconds of its time; one this late with none waiting in the queue was
# lost with its worker. Far longer than an attempt can take (EMAIL_TIMEOUT).
# With the check every 2 minutes (museum/periodic.py), a lost attempt is made again within ten
# minutes of its start, as docs/api.md says.
LOST_AFTER = timedelta(minutes=8)
# The orders whose visitor is told: confirmed ones, and those cancelled after they were.
TOLD = Q(status=OrderStatus.CONFIRMED) | Q(status=OrderStatus.CANCELLED, confirmed_at__isnull=False)


def retry_wait(attempts: int) -> timedelta:
    """How long the next attempt waits after `attempts` failed ones: doubling from a minute."""
    return min(FIRST_RETRY * 2 ** (attempts - 1), LONGEST_WAIT)


def mail_confirmation(*, order: Order) -> None:
    """Enqueue the order's confirmation email, in the caller's transaction; the order keeps the
    attempt's id, for the caller to save. The task carries the request's id, for its logs."""
    order.confirmation_task_id = send_order_confirmation_email.enqueue(
        order_id=str(order.pk), request_id=current_request_id()
    ).id


class OrderConfirmationNotSent(Exception):
    """An attempt failed; the next one is enqueued (or the last one was made)."""


@task()
def send_order_confirmation_email(*, order_id: str, attempt: int = 1, request_id: str = "") -> str:
    """One attempt at the order's confirmation email, logging under the id of the request that
    sold it."""
    with bound(request_id):
        return _send_order_confirmation(order_id=order_id, attempt=attempt, request_id=request_id)


def _send_order_confirmation(*, order_id: str, attempt: int, request_id: str) -> str:
    with transaction.atomic():
        # The order's row lock: a second task for the same order waits, then finds it sent.
        order = (
            Order.objects.select_for_update()
            .filter(TOLD, pk=uuid.UUID(order_id), confirmation_sent_at__isnull=True)
            .exclude(email=ANONYMISED_EMAIL)
            .first()
        )
        if order is None:
            return "nothing to do: already sent, a hold let go, or the address was removed"
        try:
            send_order_confirmation(order=order)
        except Exception as exc:  # whatever the mail backend raises means "later"
            error = describe_mail_error(exc)
        else:
            _record_attempt(order, confirmation_sent_at=timezone.now(), confirmation_task_id="")
            metrics.EMAILS_SENT.inc()
            return "sent"
        next_attempt = ""  # none: given up
        if attempt < MAX_ATTEMPTS:
            run_after = timezone.now() + retry_wait(attempt)
            retry = send_order_confirmation_email.using(run_after=run_after)
            next_attempt = retry.enqueue(
                order_id=order_id, attempt=attempt + 1, request_id=request_id
            ).id
        _record_attempt(order, confirmation_task_id=next_attempt)
    metrics.EMAILS_FAILED.labels(final=str(not next_attempt).lower()).inc()
    if next_attempt:
        logger.warning(
            "Confirmation of order %s not sent (attempt %d): %s", order_id, attempt, error
        )
    else:
        logger.error("Confirmation of order %s given up: %s", order_id, error)
    raise OrderConfirmationNotSent(f"attempt {attempt}: {error}")


def _record_attempt(order: Order, **outcome) -> None:
    Order.objects.filter(pk=order.pk).update(**outcome)


@task()
def resend_lost_order_confirmations() -> int:
    """Enqueue again the order emails whose attempt was lost with its worker; how many."""
    schedule_periodic_tasks()
    return requeue_lost_order_confirmations()


def requeue_lost_order_confirmations(*, limit: int = 1000) -> int:
    """An order's email attempt that died with its worker (django-tasks leaves its result
    running forever), or ended without writing its outcome, is made again, once."""
    requeued = 0
    with transaction.atomic():
        # A row locked is being sent right now: not lost.
        unsent = (
            Order.objects.select_for_update(skip_locked=True)
            .filter(TOLD, confirmation_sent_at__isnull=True)
            .exclude(confirmation_task_id="")
            .exclude(email=ANONYMISED_EMAIL)
        )
        for order in unsent.order_by("confirmed_at")[:limit]:
            lost = _lost_attempt(order.confirmation_task_id)
            if lost is None:
                continue
            retry = send_order_confirmation_email.enqueue(order_id=str(order.pk), **lost)
            _record_attempt(order, confirmation_task_id=retry.id)
            requeued += 1
    if requeued:
        logger.warning("%d lost order confirmation emails enqueued again", requeued)
    return requeued


def _lost_attempt(result_id: str) -> dict | None:
    """The attempt `result_id`'s number and request id if it was lost; None while it waits or
    runs."""
    try:
        result = send_order_confirmation_email.get_result(result_id)
    except TaskResultDoesNotExist:  # pruned: it ended long ago without writing its outcome
        return {"attempt": 1}
    if result.status == TaskResultStatus.READY:
        return None
    if result.status == TaskResultStatus.RUNNING:
        started = result.started_at or timezone.now()
        if started > timezone.now() - LOST_AFTER:
            return None  # perhaps still sending
    return {
        "attempt": int(result.kwargs.get("attempt", 1)),
        "request_id": result.kwargs.get("request_id", ""),
    }


def mail_not_placed(*, payment: Payment) -> None:
    """Enqueue, in the caller's transaction, the email telling a buyer their payment goes back,
    and why."""
    send_not_placed_email.enqueue(payment_id=str(payment.pk))


@task()
def send_not_placed_email(*, payment_id: str) -> str:
    """One attempt: the refund itself is what matters, and the order's page says it too."""
    payment = Payment.objects.select_related("order").get(pk=uuid.UUID(payment_id))
    if payment.order.email == ANONYMISED_EMAIL:
        return "nothing to do: the address was removed"
    # Why it is paid back: its refund's source says.
    reason = payment.refunds.values_list("source", flat=True).first() or RefundSource.NOT_PLACED
    send_not_placed(order=payment.order, amount=payment.amount, reason=reason)
    return "sent"
