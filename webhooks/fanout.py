"""From the audit log to deliveries: after a record commits, a task turns the records not yet
offered into one delivery per subscription that wants their messages (and may see them).

The writer's transaction only inserts its audit record; the enqueueing of the fan-out happens
after its commit, and only when some subscription wants a type the record can make. A fan-out
lost with its worker, or never enqueued, is made by the periodic sweep (webhooks.tasks).
`slot.availability_changed` is coalesced: while a slot's message waits to be sent to a
subscription, no other is made, and one is sent at most every
MUSEUM_AVAILABILITY_WEBHOOK_SECONDS; its body is read when it is sent, so it says the latest.
A registered type's message with a subject (OCTO's `availability_update`: a product's day) is
coalesced the same way, per subject.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from audit.models import AuditRecord
from webhooks.delivery import QUEUE, deliver_webhook
from webhooks.messages import Message, messages_of, possible_types
from webhooks.models import Delivery, DeliveryState, EventType, Subscription
from webhooks.services import subscribed_types

BATCH = 500
logger = logging.getLogger(__name__)


def on_recorded(sender, record: AuditRecord, **kwargs) -> None:
    """After a record's commit: a fan-out, if a subscription may want what it tells. The change
    is committed whatever fails here (the cache, the queue): the sweep makes the fan-out then."""
    try:
        if possible_types(record) & subscribed_types():
            fan_out_webhooks.enqueue()
    except Exception:
        logger.warning("Webhook fan-out left to the sweep", exc_info=True)


@task(queue_name=QUEUE)
def fan_out_webhooks() -> int:
    """Turn the audit records not yet offered into deliveries; how many."""
    return fan_out()


def fan_out(*, batch: int = BATCH) -> int:
    """Offer the unpublished audit records to the subscriptions, in order; deliveries made."""
    made = 0
    while True:
        with transaction.atomic():
            # A record locked is being offered by another fan-out: skipped, not offered twice.
            records = list(
                AuditRecord.objects.select_for_update(skip_locked=True)
                .filter(published=False)
                .order_by("pk")[:batch]
            )
            if not records:
                return made
            subscriptions = list(Subscription.objects.filter(active=True).select_related("owner"))
            wanted = {t for s in subscriptions for t in s.event_types}
            for entry in records:
                if possible_types(entry) & wanted:
                    for message in messages_of(entry):
                        made += _deliver(message, entry, subscriptions)
            AuditRecord.objects.filter(pk__in=[r.pk for r in records]).update(published=True)


def _deliver(message: Message, entry: AuditRecord, subscriptions: list[Subscription]) -> int:
    made = 0
    now = timezone.now()
    for subscription in subscriptions:
        if not subscription.wants(message.event_type) or not message.visible_to(subscription.owner):
            continue
        due = now
        if message.event_type == EventType.SLOT_AVAILABILITY_CHANGED:
            due = _coalesced_due(subscription, message.event_type, now=now, slot_id=message.slot_id)
        elif message.subject:
            due = _coalesced_due(subscription, message.event_type, now=now, subject=message.subject)
        if due is None:
            continue
        delivery = Delivery.objects.create(
            subscription=subscription,
            event_type=message.event_type,
            record_id=entry.pk,
            slot_id=message.slot_id,
            subject=message.subject,
            payload=message.payload,
            next_attempt_at=due,
            first_due_at=due,
        )
        deliver_webhook.using(run_after=due).enqueue(delivery_id=str(delivery.pk), attempt=1)
        made += 1
    return made


def _coalesced_due(subscription: Subscription, event_type: str, *, now, **about):
    """When the next message `about` a slot or subject may go to `subscription`; None if one
    is already waiting."""
    earlier = Delivery.objects.filter(subscription=subscription, event_type=event_type, **about)
    if earlier.filter(state=DeliveryState.PENDING, attempts=0).exists():
        return None
    last = earlier.order_by("-first_due_at").values_list("first_due_at", flat=True).first()
    window = timedelta(seconds=settings.MUSEUM_AVAILABILITY_WEBHOOK_SECONDS)
    return max(now, last + window) if last else now
