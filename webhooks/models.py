import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


class EventType(models.TextChoices):
    PUBLISH_NEW_EVENT = "publishNewEvent", "a special event created or changed"
    ORDER_CONFIRMED = "order.confirmed", "an order confirmed (paid, on account or free)"
    ORDER_CANCELLED = "order.cancelled", "an order cancelled"
    ORDER_EXPIRED = "order.expired", "an order's hold ran out"
    ORDER_REFUNDED = "order.refunded", "money due back for an order"
    TICKET_CHECKED_IN = "ticket.checked_in", "a ticket checked in"
    EVENT_CANCELLED = "event.cancelled", "a special event called off"
    SLOT_AVAILABILITY_CHANGED = "slot.availability_changed", "a slot's places changed"
    MEMBERSHIP_ACTIVATED = "membership.activated", "a membership active (paid, or a gift redeemed)"
    MEMBERSHIP_RENEWED = "membership.renewed", "a membership's next period paid"
    MEMBERSHIP_EXPIRED = "membership.expired", "a membership lapsed"
    MEMBERSHIP_CANCELLED = "membership.cancelled", "a membership's purchase or renewal cancelled"
    GIFT_CARD_ISSUED = "giftcard.issued", "a gift card issued (its order paid)"
    GIFT_CARD_TRANSACTION = "giftcard.transaction", "a gift card's balance moved (any transaction)"
    VOUCHER_REDEEMED = "voucher.redeemed", "a voucher used by an order confirmed"
    GROUP_REQUEST_CREATED = "group_request.created", "a group's request received"
    GROUP_REQUEST_APPROVED = "group_request.approved", "a group's request approved (its order)"
    GROUP_REQUEST_OFFERED = "group_request.offered", "another time offered to a group"
    GROUP_REQUEST_DECLINED = "group_request.declined", "a group's request declined"
    GROUP_REQUEST_EXPIRED = "group_request.expired", "a group's request expired unanswered"
    GROUP_REQUEST_CHANGED = "group_request.changed", "a group's request or visit changed"
    GROUP_REQUEST_CANCELLED = "group_request.cancelled", "a group's visit cancelled"


class Subscription(models.Model):
    """A receiver's URL and the event types it wants, signed with its secret."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_subscriptions"
    )
    url = models.URLField("URL", max_length=500)
    event_types = models.JSONField(default=list)
    active = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=200, blank=True)
    # The signing secret (whsec_ + base64); the previous one still signs until previous_until,
    # so a receiver can change over without losing a message.
    secret = models.CharField(max_length=100, editable=False)
    previous_secret = models.CharField(max_length=100, blank=True, editable=False)
    previous_until = models.DateTimeField(null=True, blank=True, editable=False)
    # Since the first of the failures in a row; a subscription failing for days is disabled.
    failing_since = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        verbose_name = "webhook subscription"
        permissions = [("manage_own_webhooks", "Can manage its own webhook subscriptions")]

    def __str__(self):
        return self.url

    def wants(self, event_type: str) -> bool:
        return self.active and event_type in self.event_types


class DeliveryState(models.TextChoices):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
    DROPPED = "dropped", "dropped (subscription disabled)"


class Delivery(models.Model):
    """One message to one subscription, tried until it is taken; its id is the `webhook-id`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    event_type = models.CharField(max_length=40, choices=EventType.choices)
    record_id = models.BigIntegerField(null=True, blank=True, help_text="The audit record.")
    # slot.availability_changed: the slot, whose body is read when it is first sent.
    slot_id = models.BigIntegerField(null=True, blank=True)
    # A registered coalesced type's subject (webhooks.messages.Maker), its body read when sent.
    subject = models.CharField(max_length=100, blank=True)
    # The body exactly as sent: the same bytes on every attempt.
    payload = models.TextField(blank=True)
    state = models.CharField(
        max_length=10, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # When the attempt sending it now claimed it (webhooks.delivery); empty while none is.
    claimed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # When its first attempt was due (slot messages are spaced out by it).
    first_due_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="webhook_pending_deliveries",
                condition=Q(state="pending"),
            ),
        ]

    def __str__(self):
        return f"{self.event_type} to {self.subscription_id}"

    @property
    def webhook_id(self) -> str:
        return f"msg_{self.pk.hex}"


class Attempt(models.Model):
    """One try at a delivery: what the receiver answered."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts_made")
    at = models.DateTimeField()
    status = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    answer = models.CharField(max_length=500, blank=True, help_text="The answer's first bytes.")
    error = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["at"]

    def __str__(self):
        return f"{self.status or self.error} at {self.at}"
