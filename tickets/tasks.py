"""The tickets' background work: confirmation emails, and the retention of buyers' personal data.

A confirmation is an `OutboxEmail` row plus a `send_confirmation_email` task, both written in the
purchase's transaction (django-tasks' database backend writes the task as a row in the same
database): a purchase that rolls back leaves neither, and a committed one is never lost, whatever
happens to the process after the commit. `manage.py db_worker` runs the task soon after; the
purchase does not wait for it (drawing the ticket image for the attachment costs several times
the rest of a purchase).

django-tasks has no retries, so a failed attempt enqueues the next one itself, with `run_after` 1,
2, 4, ... minutes later (at most an hour: `retry_wait`), for MAX_ATTEMPTS attempts (about a day).
The row is the record staff see in the admin: attempts, last error (masked, `describe_mail_error`),
when the next attempt is due (none once sent, or given up), when it was sent. The task result of
each failed attempt is marked failed with the same masked error.

Never sent twice: the queue gives each task to one worker (its claim takes the task's row under
a lock). And an attempt holds the email row's lock from reading it until its outcome is written,
attempting only a row not sent and due, so a second task for the same email (from
`resend_lost_confirmations`) waits for the first and then does nothing.

Delivery is at least once: a worker killed after the mail server took the email, but before its
outcome was written, leaves the email due and its task result running forever (django-tasks does
not notice a dead worker); `resend_lost_confirmations`, a periodic task, enqueues such an email
again once it is LOST_AFTER overdue with no attempt waiting in the queue.
"""

import logging
import uuid
from datetime import timedelta

from django.db import DatabaseError, transaction
from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks.exceptions import TaskResultDoesNotExist

from museum.periodic import schedule_periodic_tasks
from tickets.models import OutboxEmail, Ticket
from tickets.notifications import describe_mail_error, send_confirmation
from tickets.services import anonymise_old_tickets

logger = logging.getLogger(__name__)

# The retry schedule of every confirmation email, a ticket's and an order's (orders/tasks.py).
FIRST_RETRY = timedelta(minutes=1)
LONGEST_WAIT = timedelta(hours=1)
MAX_ATTEMPTS = 30  # about a day of tries
# An attempt is due within seconds of its time; one this late with none waiting in the queue was
# lost with its worker. Far longer than an attempt can take (EMAIL_TIMEOUT).
LOST_AFTER = timedelta(minutes=10)


def retry_wait(attempts: int) -> timedelta:
    """How long the next attempt waits after `attempts` failed ones: doubling from a minute."""
    return min(FIRST_RETRY * 2 ** (attempts - 1), LONGEST_WAIT)


class ConfirmationNotSent(Exception):
    """An attempt failed; the email's row says why, and when the next attempt is due."""


def queue_confirmation(*, ticket: Ticket) -> OutboxEmail:
    """Write the ticket's confirmation email and enqueue its first attempt, in the caller's
    transaction."""
    email = OutboxEmail(ticket=ticket, next_attempt_at=timezone.now())
    email.task_result_id = send_confirmation_email.enqueue(ticket_id=str(ticket.pk)).id
    email.save()
    return email


@task()
def send_confirmation_email(*, ticket_id: str) -> str:
    """One attempt at the ticket's confirmation email (see the module's docstring)."""
    return attempt_confirmation(ticket_id=uuid.UUID(ticket_id))


def attempt_confirmation(*, ticket_id: uuid.UUID) -> str:
    """Send the ticket's confirmation if it is due and no one else is sending it; what happened.

    A failure is written down (and the next attempt enqueued) before ConfirmationNotSent is
    raised with the masked error, so the task result shows it too.
    """
    failure = None
    with transaction.atomic():
        # Waits for a run holding the row (it sends), then finds the email sent.
        email = (
            OutboxEmail.objects.select_for_update()
            .filter(ticket_id=ticket_id, sent_at__isnull=True, next_attempt_at__lte=timezone.now())
            .first()
        )
        if email is None:
            return "nothing to do: sent, given up, or not due yet"
        email.attempts += 1
        try:
            send_confirmation(ticket_id=ticket_id)
        except DatabaseError:
            raise  # not the mail's fault, and nothing can be written now: the email stays due
        # Whatever the mail backend raises (refused, timed out, TLS, authentication) means "later".
        except Exception as exc:
            failure = _postpone(email, exc)
        else:
            email.sent_at, email.next_attempt_at, email.last_error = timezone.now(), None, ""
        email.save()
    if failure:
        raise ConfirmationNotSent(failure)
    return "sent"


def _postpone(email: OutboxEmail, exc: Exception) -> str:
    email.last_error = describe_mail_error(exc)[:500]
    if email.attempts >= MAX_ATTEMPTS:
        email.next_attempt_at = None
        logger.error("Confirmation of ticket %s given up: %s", email.ticket_id, email.last_error)
        return f"attempt {email.attempts}, given up: {email.last_error}"
    wait = retry_wait(email.attempts)
    email.next_attempt_at = timezone.now() + wait
    retry = send_confirmation_email.using(run_after=email.next_attempt_at)
    email.task_result_id = retry.enqueue(ticket_id=str(email.ticket_id)).id
    logger.warning(
        "Confirmation of ticket %s not sent (attempt %d, next in %s): %s",
        email.ticket_id,
        email.attempts,
        wait,
        email.last_error,
    )
    return f"attempt {email.attempts}, next in {wait}: {email.last_error}"


@task()
def resend_lost_confirmations() -> int:
    """Enqueue again the confirmations whose attempt was lost with its worker; how many."""
    schedule_periodic_tasks()
    return requeue_lost_confirmations()


def requeue_lost_confirmations(*, limit: int = 1000) -> int:
    requeued = 0
    with transaction.atomic():
        # A row locked is being sent right now: not lost.
        overdue = OutboxEmail.objects.select_for_update(skip_locked=True).filter(
            sent_at__isnull=True, next_attempt_at__lte=timezone.now() - LOST_AFTER
        )
        for email in overdue.order_by("next_attempt_at")[:limit]:
            if _is_waiting(email.task_result_id):
                continue  # behind others in the queue, not lost
            result = send_confirmation_email.enqueue(ticket_id=str(email.ticket_id))
            email.task_result_id = result.id
            email.save(update_fields=["task_result_id"])
            requeued += 1
    if requeued:
        logger.warning("%d lost confirmation emails enqueued again", requeued)
    return requeued


def _is_waiting(result_id: str) -> bool:
    try:
        result = send_confirmation_email.get_result(result_id)
    except TaskResultDoesNotExist:  # pruned, or written before emails were tasks
        return False
    return result.status == TaskResultStatus.READY


@task()
def anonymise_tickets() -> int:
    """Replace buyers' email and phone past MUSEUM_PERSONAL_DATA_RETENTION_DAYS; how many."""
    schedule_periodic_tasks()
    return anonymise_old_tickets()
