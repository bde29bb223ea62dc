"""An order's confirmation email: the one email pipeline of every sale.

The email's task is enqueued in the order's (or the confirmation's) transaction, on django-tasks'
database backend, so a rolled-back order sends nothing and a committed one is never lost; the
sale does not wait for it (making the tickets' PDF costs more than the rest of a sale).

An attempt claims the email with one conditional UPDATE of the order (confirmed, not sent, its
address kept, the previous attempt's number: it writes its own and the time), commits, and only
then makes the PDF and talks to the mail server, holding no row lock: a buyer cancelling while a
slow mail server takes the message is answered at once. It writes the outcome after: when the
email went (`confirmation_sent_at`), or, for a failure, the next attempt, enqueued
museum.lost_work.RETRY's wait later, until its last (`confirmation_task_id` names the attempt
waiting or running). A second task for the same attempt finds the claim taken and sends nothing.
Delivery is at least once: an attempt that died with its worker leaves its claim, which the
periodic `resend_lost_order_confirmations` takes back after museum.lost_work.LOST_AFTER and
enqueues the next attempt, by the same policy.

The email says what the order holds when it is made: enqueued again after a change (a move, a
cancellation: orders.services.payments.mail_change), it tells the change, and an attempt that was
making the email of the order as it was does not count it as sent. A confirmed order cancelled
whole is told that, and what goes back; a hold let go was never confirmed, and gets nothing.
"""

import logging
import uuid
from datetime import datetime

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django_tasks import task

from museum import metrics
from museum.context import bound, current_request_id
from museum.lost_work import RETRY, requeue_lost
from museum.periodic import schedule_periodic_tasks
from orders.membership_notifications import send_membership_notice
from orders.models import (
    ANONYMISED_EMAIL,
    Membership,
    Order,
    OrderStatus,
    Payment,
    RefundSource,
)
from orders.notifications import describe_mail_error, send_not_placed, send_order_confirmation

logger = logging.getLogger(__name__)


# What mail_confirmation changes on the order, for the caller's save.
EMAIL_FIELDS = [
    "confirmation_sent_at",
    "confirmation_attempt",
    "confirmation_claimed_at",
    "confirmation_task_id",
]


def mail_confirmation(*, order: Order) -> None:
    """Enqueue the order's confirmation email (a first attempt, or again: staff resend it), in
    the caller's transaction, for the caller to save (EMAIL_FIELDS). An attempt sending it now
    loses its claim: the new one sends it."""
    order.confirmation_sent_at, order.confirmation_claimed_at = None, None
    order.confirmation_attempt = 0
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
        return _send_order_confirmation(
            order_id=uuid.UUID(order_id), attempt=attempt, request_id=request_id
        )


# The orders whose visitor is told: confirmed ones, and those cancelled after they were.
TOLD = Q(status=OrderStatus.CONFIRMED) | Q(status=OrderStatus.CANCELLED, confirmed_at__isnull=False)


def unsent_emails() -> QuerySet[Order]:
    """The orders whose email is still due: confirmed (or cancelled since), not sent, address
    kept."""
    return Order.objects.filter(TOLD, confirmation_sent_at__isnull=True).exclude(
        email=ANONYMISED_EMAIL
    )


def claim_confirmation(*, order_id: uuid.UUID, attempt: int) -> datetime | None:
    """Claim the order's email for attempt number `attempt`, committed at once; when, or None if
    it is not this attempt's to make (sent, cancelled, the address removed, or another attempt
    has it)."""
    now = timezone.now()
    claimed = unsent_emails().filter(pk=order_id, confirmation_attempt=attempt - 1)
    if claimed.update(confirmation_attempt=attempt, confirmation_claimed_at=now):
        return now
    return None


def _send_order_confirmation(*, order_id: uuid.UUID, attempt: int, request_id: str) -> str:
    claimed_at = claim_confirmation(order_id=order_id, attempt=attempt)
    if claimed_at is None:
        return "nothing to do: sent, being sent, cancelled, or the address was removed"
    order = Order.objects.select_related("event", "slot").get(pk=order_id)
    try:
        send_order_confirmation(order=order)
    except Exception as exc:  # whatever the mail backend raises means "later"
        error = describe_mail_error(exc)
    else:
        record_sent(order_id=order_id, attempt=attempt, claimed_at=claimed_at)
        metrics.EMAILS_SENT.inc()
        return "sent"
    _failed(order_id=order_id, attempt=attempt, claimed_at=claimed_at, request_id=request_id)
    given_up = RETRY.next_run(attempt, now=claimed_at) is None
    metrics.EMAILS_FAILED.labels(final=str(given_up).lower()).inc()
    if given_up:
        logger.error("Confirmation of order %s given up: %s", order_id, error)
    else:
        logger.warning(
            "Confirmation of order %s not sent (attempt %d): %s", order_id, attempt, error
        )
    raise OrderConfirmationNotSent(f"attempt {attempt}: {error}")


def record_sent(*, order_id: uuid.UUID, attempt: int, claimed_at: datetime) -> None:
    """The attempt's email went. Recorded even if its claim was taken back as lost meanwhile (its
    next attempt then finds it sent), but not after a change of the order started a new series
    (mail_confirmation): this attempt mailed the order as it was, the new one mails it as it is."""
    ours = Q(confirmation_claimed_at=claimed_at) | Q(confirmation_claimed_at__isnull=True)
    Order.objects.filter(ours, pk=order_id, confirmation_attempt=attempt).update(
        confirmation_sent_at=timezone.now(),
        confirmation_claimed_at=None,
        confirmation_task_id="",
    )


def _failed(*, order_id: uuid.UUID, attempt: int, claimed_at: datetime, request_id: str) -> None:
    """The attempt's claim is released and the next attempt enqueued; nothing if the claim was
    taken back meanwhile (its next attempt is already enqueued)."""
    with transaction.atomic():
        ours = Order.objects.filter(
            pk=order_id, confirmation_attempt=attempt, confirmation_claimed_at=claimed_at
        )
        if not ours.select_for_update().exists():
            return
        next_attempt = ""  # none: given up
        run_after = RETRY.next_run(attempt, now=timezone.now())
        if run_after is not None:
            retry = send_order_confirmation_email.using(run_after=run_after)
            next_attempt = retry.enqueue(
                order_id=str(order_id), attempt=attempt + 1, request_id=request_id
            ).id
        ours.update(confirmation_claimed_at=None, confirmation_task_id=next_attempt)


@task()
def resend_lost_order_confirmations() -> int:
    """Enqueue again the order emails whose attempt was lost with its worker; how many."""
    schedule_periodic_tasks()
    return requeue_lost_order_confirmations()


def requeue_lost_order_confirmations() -> int:
    """An order's email attempt that died with its worker while it held the claim is followed by
    the next, as a failed one is."""
    requeued = requeue_lost(
        unsent_emails().filter(confirmation_claimed_at__isnull=False),
        attempt_field="confirmation_attempt",
        claimed_at_field="confirmation_claimed_at",
        enqueue=_enqueue_again,
        give_up=_give_up,
    )
    if requeued:
        logger.warning("%d lost order confirmation emails enqueued again", requeued)
    return requeued


def _enqueue_again(order: Order, attempt: int, run_after: datetime) -> None:
    retry = send_order_confirmation_email.using(run_after=run_after)
    result = retry.enqueue(order_id=str(order.pk), attempt=attempt)
    Order.objects.filter(pk=order.pk).update(confirmation_task_id=result.id)


def _give_up(order: Order) -> None:
    Order.objects.filter(pk=order.pk).update(confirmation_task_id="")
    metrics.EMAILS_FAILED.labels(final="true").inc()
    logger.error("Confirmation of order %s given up: its last attempt was lost", order.pk)


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


def mail_membership(*, membership: Membership, kind: str, days: int = 0) -> None:
    """Enqueue, in the caller's transaction, an email to a membership's holder: `kind`
    "activated" (a gift redeemed: a purchase's is its order's confirmation), "reminder" (to
    renew, `days` before its last day) or "cancelled" (a redeemed gift cancelled by staff: its
    order's email goes to the giver). Once each: its caller claims it (a redemption, a
    reminder's conditional UPDATE, a cancellation under the order's lock)."""
    send_membership_email.enqueue(membership_id=str(membership.pk), kind=kind, days=days)


@task()
def send_membership_email(*, membership_id: str, kind: str, days: int = 0) -> str:
    """One attempt: the membership, and its renewal, are on the member's account page too."""
    membership = (
        Membership.objects.select_related("membership_type")
        .filter(pk=uuid.UUID(membership_id))
        .first()
    )
    if membership is None or membership.email in ("", ANONYMISED_EMAIL):
        return "nothing to do: the address was removed"
    send_membership_notice(membership=membership, kind=kind)
    return f"sent: {kind} {days or ''}".strip()
