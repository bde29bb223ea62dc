"""A gift card and its ledger: the balance is the sum of its transactions, each naming what
moved it (the order that sold it, the payment it made, the refund that came back, or staff with
a reason), never a number edited in place."""

import uuid
from datetime import date
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q, Sum

from museum import i18n
from museum.money import ZERO
from orders.models import Order, Payment


class GiftCardStatus(models.TextChoices):
    PENDING = "pending", "Not paid yet"
    ACTIVE = "active", "Active"
    EXPIRED = "expired", "Expired"


class GiftCard(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    code = models.CharField(max_length=19, unique=True)
    # What it was sold for, or refunded onto it: its first credit once issued.
    value = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3)
    # The order that sold it; none for a card staff issued (a refund to a new card).
    order = models.ForeignKey(
        Order, on_delete=models.PROTECT, null=True, blank=True, related_name="gift_cards"
    )
    buyer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="gift_cards"
    )
    email = models.EmailField(blank=True)
    language = models.CharField(max_length=8, default=i18n.museum_language_code)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set once it holds its value (its order paid): spendable from then until `expires_on`.
    issued_at = models.DateTimeField(null=True, blank=True)
    expires_on = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "gift card"
        permissions = [("change_balance", "Can change a gift card's balance, with a reason")]
        constraints = [
            models.CheckConstraint(name="gift_card_value_positive", condition=Q(value__gt=0)),
            models.CheckConstraint(
                name="issued_gift_card_expires",
                condition=Q(issued_at__isnull=True) | Q(expires_on__isnull=False),
            ),
        ]

    def __str__(self):
        # Its last group only: the code spends the card, so records and pages never show it.
        return f"Gift card …{self.code[-4:]}"

    def status_on(self, day: date) -> str:
        """Whether it may be spent on `day` (`active`) or why not: `pending` until its order is
        paid, `expired` after `expires_on`. The one answer every face and payment reads."""
        if self.issued_at is None:
            return GiftCardStatus.PENDING
        if self.expires_on is not None and self.expires_on < day:
            return GiftCardStatus.EXPIRED
        return GiftCardStatus.ACTIVE

    def balance(self) -> Decimal:
        """What it holds: the sum of its ledger."""
        return self.transactions.aggregate(total=Sum("amount", default=ZERO))["total"]


class GiftCardPdf(models.Model):
    """A card's PDF, kept so it is drawn once (for its email, then each download); `etag` names
    what it prints (the museum's name, the language's words, the layout), so a change draws it
    again."""

    card = models.OneToOneField(
        GiftCard, on_delete=models.CASCADE, primary_key=True, related_name="printed"
    )
    pdf = models.BinaryField()
    etag = models.CharField(max_length=64)
    made_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "gift card's PDF"

    def __str__(self):
        return f"PDF of {self.card_id}"


class TransactionKind(models.TextChoices):
    ISSUED = "issued", "Issued (sold, or a refund onto a new card)"
    REDEEMED = "redeemed", "Paid for an order"
    CREDITED = "credited", "Paid back onto it (a refund)"
    ADJUSTED = "adjusted", "Changed by staff"


class Transaction(models.Model):
    """One move of a card's balance: positive onto it, negative off it."""

    card = models.ForeignKey(GiftCard, on_delete=models.PROTECT, related_name="transactions")
    kind = models.CharField(max_length=10, choices=TransactionKind.choices)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    order = models.ForeignKey(
        Order, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    payment = models.ForeignKey(
        Payment, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    reason = models.CharField(max_length=200, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "pk"]
        verbose_name = "gift card transaction"
        constraints = [
            models.CheckConstraint(name="gift_card_transaction_moves", condition=~Q(amount=0)),
            models.CheckConstraint(
                name="gift_card_adjustment_has_reason",
                condition=~Q(kind="adjusted") | ~Q(reason=""),
            ),
        ]

    def __str__(self):
        return f"{self.amount} on {self.card_id}"
