"""Donations: an amount a buyer gives to one of the museum's funds, a line of an order beside
its tickets or alone. A donation carries no tax and goes back only when staff refund it."""

from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from museum.money import ZERO

from .sale import Order


class Fund(models.Model):
    """What a donation goes to: the museum's general fund, an acquisition, its education
    programme."""

    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    active = models.BooleanField(default=True, help_text="Offered only while active.")
    minimum = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("1.00"), validators=[MinValueValidator(0)]
    )
    maximum = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("5000.00"))
    suggested_amounts = models.JSONField(
        default=list, blank=True, help_text='Offered at checkout, e.g. ["5.00", "10.00", "25.00"].'
    )
    ordering = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first.")

    class Meta:
        ordering = ["ordering", "name"]
        constraints = [
            models.CheckConstraint(
                name="fund_minimum_within_maximum",
                condition=Q(minimum__gt=0) & Q(minimum__lte=F("maximum")),
            ),
        ]

    def __str__(self):
        return self.name

    def clean(self):
        """Its suggested amounts are amounts it takes (the admin asks before saving): the API
        and the visitor's page offer them as they are."""
        amounts = self.suggested_amounts
        if not isinstance(amounts, list):
            raise ValidationError({"suggested_amounts": 'A list of amounts: ["5.00", "10.00"].'})
        for amount in amounts:
            try:
                value = Decimal(str(amount))
            except InvalidOperation:
                value = None
            if value is None or not value.is_finite() or value != value.quantize(Decimal("0.01")):
                raise ValidationError({"suggested_amounts": f"Not an amount in cents: {amount!r}."})
            if not self.minimum <= value <= self.maximum:
                raise ValidationError(
                    {"suggested_amounts": f"{amount} is outside the minimum and maximum."}
                )


class Donation(models.Model):
    """One gift to a fund, on its order."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="donations")
    fund = models.ForeignKey(Fund, on_delete=models.PROTECT, related_name="donations")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    created_at = models.DateTimeField(auto_now_add=True)
    # Refunded by staff: no longer given.
    cancelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(name="donation_amount_positive", condition=Q(amount__gt=ZERO)),
        ]

    def __str__(self):
        return f"{self.amount} to {self.fund}"

    # A line of its order as tickets and membership sales are (price gross, its rate and tax),
    # so the refunds, credit notes and tax sums that read those read a donation alike: untaxed.
    @property
    def price(self) -> Decimal:
        return self.amount

    @property
    def tax_rate(self) -> Decimal:
        return ZERO

    @property
    def tax(self) -> Decimal:
        return ZERO
