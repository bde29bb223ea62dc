"""Delivering a message: signed per Standard Webhooks, retried on a schedule, at least once.

Each attempt claims the delivery with one conditional UPDATE (still pending, the previous attempt's
number: it writes its own and the time), sends outside any transaction (no row stays locked while a
receiver answers, up to 10 s), then writes what happened. An attempt lost with its worker leaves
its claim, which the sweep (webhooks.tasks) takes back and follows with the next attempt
(museum.lost_work). The `webhook-id` is the delivery's and stays the same on every attempt, so a
receiver drops a message it already has. A 2xx is taken; a 410 disables the subscription; anything
else (3xx included: no redirect is followed) is tried again after RETRIES, with jitter, or after
the answer's Retry-After for 429 and 5xx. A subscription failing for FAILING_DAYS is disabled and
the museum's staff are told.
"""

import logging
import random
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone
from django_tasks import task
from standardwebhooks.webhooks import Webhook

from museum import lost_work, metrics
from museum.accounts import STAFF_GROUP
from webhooks.http import Answer, Refused, post
from webhooks.messages import body_when_sent, slot_payload
from webhooks.models import Attempt, Delivery, DeliveryState, Subscription
from webhooks.services import disable, signing_secrets

logger = logging.getLogger(__name__)

# The wait before each retry: the first attempt and nine more, about three days in all.
RETRIES = [
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
    timedelta(hours=14),
    timedelta(hours=20),
    timedelta(hours=24),
]
FAILING_DAYS = 3
LONGEST_RETRY_AFTER = timedelta(hours=24)


def signed_headers(subscription: Subscription, *, webhook_id: str, at: datetime, body: str):
    signatures = " ".join(
        Webhook(secret).sign(msg_id=webhook_id, timestamp=at, data=body)
        for secret in signing_secrets(subscription)
    )
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signatures,
        "Content-Type": "application/json",
        "User-Agent": "museum-webhooks",
    }


# The webhooks' tasks have a queue, and a worker, of their own: a delivery starts as soon as it is
# due, never behind the confirmation emails that draw PDFs and wait on a mail server
# (docs/deployment.md, "Background tasks").
QUEUE = "webhooks"


@task(queue_name=QUEUE)
def deliver_webhook(*, delivery_id: str, attempt: int) -> str:
    return attempt_delivery(delivery_id=uuid.UUID(delivery_id), attempt=attempt)


def claim_delivery(*, delivery_id, attempt: int) -> datetime | None:
    """Claim the delivery for attempt number `attempt`, committed at once; when, or None if it
    is not this attempt's to make (made, or no longer pending)."""
    now = timezone.now()
    claimed = Delivery.objects.filter(
        pk=delivery_id, state=DeliveryState.PENDING, attempts=attempt - 1
    ).update(attempts=attempt, next_attempt_at=now, claimed_at=now)
    return now if claimed else None


def attempt_delivery(*, delivery_id, attempt: int) -> str:
    """Attempt number `attempt` of the delivery, unless another already made it."""
    now = claim_delivery(delivery_id=delivery_id, attempt=attempt)
    if now is None:
        return "nothing to do: made, or no longer pending"
    delivery = Delivery.objects.select_related("subscription").get(pk=delivery_id)
    subscription = delivery.subscription
    if not subscription.active:
        _end(delivery, DeliveryState.DROPPED)
        return "dropped: the subscription is disabled"
    if not delivery.payload:  # coalesced: what it is now, then kept for retries
        if delivery.slot_id is not None:
            delivery.payload = slot_payload(delivery.slot_id)
        else:
            delivery.payload = body_when_sent(delivery.event_type, delivery.subject)
        Delivery.objects.filter(pk=delivery.pk).update(payload=delivery.payload)
    answer, error = _send(delivery, at=now)
    Attempt.objects.create(
        delivery=delivery,
        at=now,
        status=answer.status if answer else None,
        duration_ms=answer.duration_ms if answer else 0,
        answer=answer.body.decode("utf-8", "replace")[:500] if answer else "",
        error=error[:200],
    )
    outcome = _outcome(delivery, answer, error, attempt=attempt)
    metrics.count_delivery(
        "delivered"
        if outcome == "delivered"
        else "failed"
        if "next attempt" in outcome
        else "given_up"
    )
    return outcome


def _send(delivery: Delivery, *, at: datetime) -> tuple[Answer | None, str]:
    headers = signed_headers(
        delivery.subscription, webhook_id=delivery.webhook_id, at=at, body=delivery.payload
    )
    try:
        return post(delivery.subscription.url, body=delivery.payload.encode(), headers=headers), ""
    except Refused as refusal:
        return None, f"refused: {refusal}"
    except Exception as exc:  # whatever the network raises means "later"
        return None, f"{type(exc).__name__}: {exc}"


def _outcome(delivery: Delivery, answer: Answer | None, error: str, *, attempt: int) -> str:
    subscription = delivery.subscription
    status = answer.status if answer else None
    if status is not None and 200 <= status < 300:
        with transaction.atomic():
            _end(delivery, DeliveryState.DELIVERED)
            Subscription.objects.filter(pk=subscription.pk).update(failing_since=None)
        return "delivered"
    if status == 410:
        _end(delivery, DeliveryState.FAILED)
        disable(subscription, reason="The receiver answered 410 Gone.")
        return "failed: 410, subscription disabled"
    Subscription.objects.filter(pk=subscription.pk, failing_since__isnull=True).update(
        failing_since=timezone.now()
    )
    subscription.refresh_from_db(fields=["failing_since", "active"])
    why = f"status {status}" if status is not None else error
    if _failing_too_long(subscription):
        _end(delivery, DeliveryState.FAILED)
        return f"failed ({why}): subscription disabled"
    if attempt > len(RETRIES):
        _end(delivery, DeliveryState.FAILED)
        logger.warning("Webhook %s given up after %d attempts: %s", delivery.pk, attempt, why)
        return f"failed ({why}): given up"
    wait = _retry_after(answer) or _jittered(RETRIES[attempt - 1])
    _schedule(delivery, attempt=attempt + 1, at=timezone.now() + wait)
    return f"failed ({why}): next attempt in {int(wait.total_seconds())} s"


def _end(delivery: Delivery, state: DeliveryState) -> None:
    Delivery.objects.filter(pk=delivery.pk).update(
        state=state, next_attempt_at=None, claimed_at=None
    )


def _schedule(delivery: Delivery, *, attempt: int, at: datetime) -> None:
    with transaction.atomic():
        Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=at, claimed_at=None)
        deliver_webhook.using(run_after=at).enqueue(delivery_id=str(delivery.pk), attempt=attempt)


def _jittered(wait: timedelta) -> timedelta:
    # Spread the retries of many failures over ±10%, so they do not all come back at once.
    return wait * random.uniform(0.9, 1.1)  # noqa: S311 (not a secret)


def _retry_after(answer: Answer | None) -> timedelta | None:
    """The receiver's Retry-After in seconds, for 429 and 5xx (a date is not taken)."""
    if answer is None or not (answer.status == 429 or answer.status >= 500):
        return None
    value = answer.headers.get("retry-after", "").strip()
    if not value.isdigit():
        return None
    return min(timedelta(seconds=int(value)), LONGEST_RETRY_AFTER)


def _failing_too_long(subscription: Subscription) -> bool:
    since = subscription.failing_since
    if not subscription.active or since is None:
        return False
    if since > timezone.now() - timedelta(days=FAILING_DAYS):
        return False
    disable(subscription, reason=f"Failing since {since:%Y-%m-%d %H:%M} UTC.")
    _tell_staff(subscription)
    return True


def _tell_staff(subscription: Subscription) -> None:
    staff = User.objects.filter(groups__name=STAFF_GROUP, is_active=True).exclude(email="")
    addresses = sorted(set(staff.values_list("email", flat=True)))
    if not addresses:
        return
    send_mail(
        subject=f"Webhook disabled: {subscription.url}",
        message=(
            f"The webhook subscription {subscription.pk} of {subscription.owner} to "
            f"{subscription.url} failed for {FAILING_DAYS} days and was disabled. Its owner can "
            "turn it on again (PATCH /v1.1/webhooks/{id} with active true), or staff in the admin."
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=addresses,
        fail_silently=True,
    )


def send_again(*, delivery_id) -> None:
    """Staff: one more attempt of a delivery, at once, with the same webhook-id."""
    with transaction.atomic():
        delivery = Delivery.objects.select_for_update().get(pk=delivery_id)
        Delivery.objects.filter(pk=delivery.pk).update(
            state=DeliveryState.PENDING, next_attempt_at=timezone.now(), claimed_at=None
        )
        deliver_webhook.enqueue(delivery_id=str(delivery.pk), attempt=delivery.attempts + 1)


def requeue_lost() -> int:
    """Deliveries whose attempt was lost with its worker are attempted again; how many."""
    return lost_work.requeue_lost(
        Delivery.objects.filter(state=DeliveryState.PENDING, claimed_at__isnull=False),
        attempt_field="attempts",
        claimed_at_field="claimed_at",
        enqueue=_enqueue_again,
        give_up=_give_up,
    )


def _enqueue_again(delivery: Delivery, attempt: int, run_after: datetime) -> None:
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=run_after)
    deliver_webhook.using(run_after=run_after).enqueue(
        delivery_id=str(delivery.pk), attempt=attempt
    )


def _give_up(delivery: Delivery) -> None:
    _end(delivery, DeliveryState.FAILED)
    logger.warning("Webhook %s given up: its last attempt was lost", delivery.pk)
