"""What the limits on a sale count and set: an account's own limits, and the emails sent to a
buyer."""

from django.conf import settings
from django.db import models

from .sale import Order


class SaleLimits(models.Model):
    """An account's own limits on places, set by staff: a shop or kiosk selling for many people
    holds more than one visitor may. Empty: the museum's default (none for sales partners)."""

    account = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sale_limits"
    )
    max_held_places = models.PositiveIntegerField(
        "places held at once", null=True, blank=True, help_text="Empty: the museum's default."
    )
    max_places_per_day = models.PositiveIntegerField(
        "places per visit date", null=True, blank=True, help_text="Empty: the museum's default."
    )
    max_free_places_per_day = models.PositiveIntegerField(
        "free places a day",
        null=True,
        blank=True,
        help_text="Places of free orders in 24 hours. Empty: the museum's default.",
    )

    class Meta:
        verbose_name = "sale limits"
        verbose_name_plural = "sale limits"

    def __str__(self):
        return f"Limits of {self.account}"


class BuyerEmail(models.Model):
    """An email the museum sent a buyer (enqueued): what the daily limit of emails to one mailbox
    counts, every kind alike."""

    class Kind(models.TextChoices):
        CONFIRMATION = "confirmation", "Order confirmation"
        PAID_BACK = "paid_back", "Payment paid back whole"
        CHANGE = "change", "Order changed (moved, tickets cancelled)"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="emails")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    sent_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = "email to a buyer"
        verbose_name_plural = "emails to buyers"

    def __str__(self):
        return f"{self.kind} of {self.order_id}"
