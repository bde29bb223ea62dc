"""The orders' background work: one confirmation email per order, expired holds released, and
buyers' personal data removed after the retention period.

The email's task is enqueued in the order's (or the confirmation's) transaction, on django-tasks'
database backend, so a rolled-back order sends nothing and a committed one is never lost. A failed
attempt enqueues the next itself, on the schedule of the tickets' emails (tickets.tasks.retry_wait,
MAX_ATTEMPTS); the order records when its email went (`confirmation_sent_at`) and which attempt is
waiting or running (`confirmation_task_id`). Delivery is at least once: an attempt that died with
its worker is enqueued again by the periodic task `resend_lost_order_confirmations`, as the
tickets' emails are (tickets/tasks.py).
"""

import logging
import uuid

from django.db import transaction
from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks.exceptions import TaskResultDoesNotExist

from museum.periodic import schedule_periodic_tasks
from orders import services
from orders.models import Order, OrderStatus
from orders.notifications import send_order_confirmation
from tickets.notifications import describe_mail_error
from tickets.services import ANONYMISED_EMAIL
from tickets.tasks import LOST_AFTER, MAX_ATTEMPTS, retry_wait

logger = logging.getLogger(__name__)


class OrderConfirmationNotSent(Exception):
    """An attempt failed; the next one is enqueued (or the last one was made)."""


@task()
def send_order_confirmation_email(*, order_id: str, attempt: int = 1) -> str:
    """One attempt at the order's confirmation email."""
    with transaction.atomic():
        # The order's row lock: a second task for the same order waits, then finds it sent.
        order = (
            Order.objects.select_for_update()
            .filter(pk=uuid.UUID(order_id), confirmation_sent_at__isnull=True)
            # An order cancelled before its email went is not confirmed to its buyer.
            .filter(status=OrderStatus.CONFIRMED)
            .exclude(email=ANONYMISED_EMAIL)
            .first()
        )
        if order is None:
            return "nothing to do: already sent, cancelled, or the address was removed"
        try:
            send_order_confirmation(order=order)
        except Exception as exc:  # whatever the mail backend raises means "later"
            error = describe_mail_error(exc)
        else:
            _record_attempt(order, confirmation_sent_at=timezone.now(), confirmation_task_id="")
            return "sent"
        next_attempt = ""  # none: given up
        if attempt < MAX_ATTEMPTS:
            run_after = timezone.now() + retry_wait(attempt)
            retry = send_order_confirmation_email.using(run_after=run_after)
            next_attempt = retry.enqueue(order_id=order_id, attempt=attempt + 1).id
        _record_attempt(order, confirmation_task_id=next_attempt)
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
            .filter(status=OrderStatus.CONFIRMED, confirmation_sent_at__isnull=True)
            .exclude(confirmation_task_id="")
            .exclude(email=ANONYMISED_EMAIL)
        )
        for order in unsent.order_by("confirmed_at")[:limit]:
            attempt = _lost_attempt(order.confirmation_task_id)
            if attempt is None:
                continue
            retry = send_order_confirmation_email.enqueue(order_id=str(order.pk), attempt=attempt)
            _record_attempt(order, confirmation_task_id=retry.id)
            requeued += 1
    if requeued:
        logger.warning("%d lost order confirmation emails enqueued again", requeued)
    return requeued


def _lost_attempt(result_id: str) -> int | None:
    """The number of the attempt `result_id` if it was lost; None while it waits or runs."""
    try:
        result = send_order_confirmation_email.get_result(result_id)
    except TaskResultDoesNotExist:  # pruned: it ended long ago without writing its outcome
        return 1
    if result.status == TaskResultStatus.READY:
        return None
    if result.status == TaskResultStatus.RUNNING:
        started = result.started_at or timezone.now()
        if started > timezone.now() - LOST_AFTER:
            return None  # perhaps still sending
    return int(result.kwargs.get("attempt", 1))


@task()
def release_expired_holds() -> int:
    """Give back the places of holds that ran out; how many orders."""
    schedule_periodic_tasks()
    return services.release_expired_holds()


@task()
def anonymise_orders() -> int:
    """Replace buyers' email and phone on orders past MUSEUM_PERSONAL_DATA_RETENTION_DAYS."""
    schedule_periodic_tasks()
    return services.anonymise_old_orders()
