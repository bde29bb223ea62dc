"""The orders' background work: one confirmation email per order, expired holds released, and
buyers' personal data removed after the retention period.

The email's task is enqueued in the order's (or the confirmation's) transaction, on django-tasks'
database backend, so a rolled-back order sends nothing and a committed one is never lost. A
failed attempt enqueues the next itself, 1, 2, 4... minutes later (at most an hour), for
ORDER_EMAIL_MAX_ATTEMPTS attempts; the order records when its email went (`confirmation_sent_at`).
"""

import logging
import uuid
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django_tasks import task

from museum.periodic import schedule_periodic_tasks
from orders import services
from orders.models import Order
from orders.notifications import send_order_confirmation
from tickets.notifications import describe_mail_error
from tickets.services import ANONYMISED_EMAIL

logger = logging.getLogger(__name__)

ORDER_EMAIL_FIRST_RETRY = timedelta(minutes=1)
ORDER_EMAIL_LONGEST_WAIT = timedelta(hours=1)
ORDER_EMAIL_MAX_ATTEMPTS = 30  # about a day of tries


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
            .exclude(email=ANONYMISED_EMAIL)
            .first()
        )
        if order is None:
            return "nothing to do: already sent, or the address was removed"
        try:
            send_order_confirmation(order=order)
        except Exception as exc:  # whatever the mail backend raises means "later"
            error = describe_mail_error(exc)
        else:
            Order.objects.filter(pk=order.pk).update(confirmation_sent_at=timezone.now())
            return "sent"
    if attempt < ORDER_EMAIL_MAX_ATTEMPTS:
        wait = min(ORDER_EMAIL_FIRST_RETRY * 2 ** (attempt - 1), ORDER_EMAIL_LONGEST_WAIT)
        retry = send_order_confirmation_email.using(run_after=timezone.now() + wait)
        retry.enqueue(order_id=order_id, attempt=attempt + 1)
        logger.warning(
            "Confirmation of order %s not sent (attempt %d): %s", order_id, attempt, error
        )
    else:
        logger.error("Confirmation of order %s given up: %s", order_id, error)
    raise OrderConfirmationNotSent(f"attempt {attempt}: {error}")


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
