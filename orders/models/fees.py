"""A fee sold with a visit that is not an admission: a group's guided tour, per tour or per
guide. A line of its order as a ticket is (its price gross, its kept rate and tax), so its
order's total, tax per rate and invoice read it alike."""

from django.db import models
from django.db.models import Q

from museum.money import ZERO

from .sale import Order, line_tax, line_tax_rate


class Fee(models.Model):
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="fees")
    # What the invoice calls it, in the order's language as it was sold.
    description = models.CharField(max_length=200)
    price = models.DecimalField(max_digits=8, decimal_places=2)
    tax_rate = line_tax_rate()
    tax = line_tax()
    created_at = models.DateTimeField(auto_now_add=True)
    # Taken off its order (fewer guides after a change): no longer in its total.
    cancelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(name="fee_not_negative", condition=Q(price__gte=ZERO)),
        ]

    def __str__(self):
        return f"{self.description}: {self.price}"
