"""Money in and out of an order: payments through a provider, refunds, and the provider
notifications already handled."""

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

from .donations import Donation
from .sale import MembershipSale, Order, Ticket


class PaymentState(models.TextChoices):
    CREATED = "created", "Created"
    PENDING = "pending", "Pending (the buyer is paying)"
    CONFIRMED = "confirmed", "Confirmed"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    # Taken, then paid back whole: it came after the order's places were gone, or was a second
    # payment of an order already paid.
    REFUNDED = "refunded", "Refunded whole"


class Payment(models.Model):
    """One attempt to pay an order (or part of it) through a provider: an order is paid when
    its confirmed payments cover its total (Order.paid_in_full)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="payments")
    provider = models.CharField(max_length=20)
    # The provider's own id for it (Stripe: the PaymentIntent's), empty until it has one.
    reference = models.CharField(max_length=100, blank=True, db_index=True)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3)
    state = models.CharField(
        max_length=10, choices=PaymentState.choices, default=PaymentState.CREATED
    )
    # The desk: cash or card terminal; the provider's message of a failure.
    info = models.CharField(max_length=200, blank=True)
    # Cash at the desk: what the visitor handed over (the change is what it exceeds the amount).
    tendered = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    taken_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Who started it: the buyer, or staff at the desk.",
    )

    # What its refunds gave back already, where the read annotates it
    # (orders.services.payments._confirmed_newest_first).
    given_back: Decimal
    # What starting it gave the client (orders.providers.base.Started), on the answer only.
    client_secret: str | None = None
    pay_url: str | None = None

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # A new start answers the payment in progress, or cancels it at its provider first.
            models.UniqueConstraint(
                fields=["order"],
                condition=Q(state__in=["created", "pending"]),
                name="one_payment_in_progress_per_order",
            ),
            models.CheckConstraint(name="payment_amount_positive", condition=Q(amount__gt=0)),
        ]

    def __str__(self):
        return f"{self.amount} {self.currency} by {self.provider} ({self.state})"


class RefundState(models.TextChoices):
    CREATED = "created", "Created (being paid back)"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    MANUAL = "manual", "Manual (staff pay it back by hand)"
    # Paid onto a new gift card instead (its `reference` names the card): the giftcards app's,
    # through orders.signals.refunds_to_gift_card; staff may pay it back through its payment
    # instead while the card is unspent (orders.services.payments.pay_back_instead).
    GIFT_CARD = "gift_card", "Onto a new gift card"


class RefundSource(models.TextChoices):
    BUYER = "buyer", "Cancelled by the buyer"
    STAFF = "staff", "Cancelled by staff"
    EVENT_CANCELLED = "event_cancelled", "Event called off"
    # A payment that came when the order could not take it, paid back whole at once.
    NOT_PLACED = "not_placed", "Paid after the hold ran out, places gone"
    PAID_AFTER_CANCEL = "paid_after_cancel", "Paid after the order was cancelled"
    ALREADY_PAID = "already_paid", "Paid for an order already paid"
    # What part payments took of a hold that ended (ran out, cancelled) or changed unpaid.
    UNPAID_HOLD = "unpaid_hold", "Part payment of a hold that ended or changed unpaid"


class Refund(models.Model):
    """Money paid back for a cancelled ticket, through the provider that took it (or, without a
    payment to pay it back through, by staff by hand)."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="refunds")
    # The ticket or membership sale it pays back (one refund per payment that paid for it:
    # a line paid part by gift card, part by card goes back to both); neither for a payment
    # paid back whole (one that came too late, or a hold's part payment).
    ticket = models.ForeignKey(
        Ticket, on_delete=models.PROTECT, related_name="refunds", null=True, blank=True
    )
    membership_sale = models.ForeignKey(
        MembershipSale, on_delete=models.PROTECT, related_name="refunds", null=True, blank=True
    )
    # A donation staff gave back.
    donation = models.ForeignKey(
        Donation, on_delete=models.PROTECT, related_name="refunds", null=True, blank=True
    )
    payment = models.ForeignKey(
        Payment, on_delete=models.PROTECT, related_name="refunds", null=True, blank=True
    )
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    state = models.CharField(
        max_length=10, choices=RefundState.choices, default=RefundState.CREATED
    )
    source = models.CharField(max_length=20, choices=RefundSource.choices)
    reference = models.CharField(max_length=100, blank=True)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)
    # Its claim by the task paying it back (orders.refunds): the number of the last attempt that
    # claimed it, and when the attempt calling the provider now did (empty while none is).
    attempt = models.PositiveSmallIntegerField(default=0, db_default=0, editable=False)
    claimed_at = models.DateTimeField(null=True, blank=True, editable=False)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Empty: the museum called the event off, or a payment came too late.",
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(name="refund_amount_not_negative", condition=Q(amount__gte=0)),
        ]

    def __str__(self):
        return f"{self.amount} for {self.ticket or self.order}"


class ProviderEvent(models.Model):
    """A provider's notification already handled: its id, once, so a repeat changes nothing."""

    provider = models.CharField(max_length=20)
    event_id = models.CharField(max_length=255)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "event_id"], name="provider_event_once")
        ]

    def __str__(self):
        return f"{self.provider} {self.event_id}"
