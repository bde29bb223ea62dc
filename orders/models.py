"""What a visitor buys in one go: an order of tickets, each for a visitor category at its price.

The order is its own app: it sells general entry (hours) and event dates (events) alike, while
`tickets` keeps the admission itself (its token, image and the door).
"""

import uuid
from decimal import Decimal
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from events.models import SpecialEvent
from hours.models import EntrySlot

if TYPE_CHECKING:
    from tickets.models import Ticket

# What an anonymised order keeps instead of its buyer's address: a valid address at a domain
# reserved never to exist (RFC 2606), so the row still passes the field's validation.
ANONYMISED_EMAIL = "anonymised@anonymised.invalid"


class VisitorCategory(models.Model):
    """A kind of visitor and what they pay: adult, child, student..."""

    category = models.SlugField(
        "code", max_length=40, unique=True, help_text="What the API calls it, e.g. 'child'."
    )
    name = models.CharField(max_length=100)
    general_price = models.DecimalField(
        "general-admission price",
        max_digits=8,
        decimal_places=2,
        validators=[MinValueValidator(Decimal("0"))],
    )
    event_price_percent = models.PositiveSmallIntegerField(
        "share of an event's price (%)",
        default=100,
        validators=[MaxValueValidator(100)],
        help_text="What this visitor pays of a special event's price, in percent.",
    )
    check_at_door = models.BooleanField(
        "check proof at the door",
        default=False,
        help_text="The door asks staff to check proof of age or status.",
    )
    active = models.BooleanField(default=True, help_text="Sold only while active.")
    ordering = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first.")

    class Meta:
        ordering = ["ordering", "category"]
        verbose_name = "visitor category"
        verbose_name_plural = "visitor categories"
        constraints = [
            models.CheckConstraint(
                name="category_price_not_negative", condition=Q(general_price__gte=0)
            ),
            models.CheckConstraint(
                name="category_event_percent_at_most_100",
                condition=Q(event_price_percent__lte=100),
            ),
        ]

    def __str__(self):
        return self.name


class OrderStatus(models.TextChoices):
    CONFIRMED = "confirmed", "Confirmed"
    HELD = "held", "Held (not paid yet)"
    EXPIRED = "expired", "Hold expired"
    CANCELLED = "cancelled", "Cancelled"


class Order(models.Model):
    """Tickets bought together, for one date (and one slot or event): all taken, or none."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    buyer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="orders"
    )
    email = models.EmailField()
    phone = models.CharField(max_length=32, blank=True)
    status = models.CharField(max_length=10, choices=OrderStatus.choices)
    hold_expires_at = models.DateTimeField(null=True, blank=True)
    confirmation_code = models.CharField(max_length=40, unique=True)
    ticket_type = models.CharField("type", max_length=10)
    date = models.DateField(db_index=True)
    event = models.ForeignKey(
        SpecialEvent, on_delete=models.PROTECT, null=True, blank=True, related_name="orders"
    )
    slot = models.ForeignKey(
        EntrySlot, on_delete=models.PROTECT, null=True, blank=True, related_name="orders"
    )
    total = models.DecimalField(max_digits=10, decimal_places=2)
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    confirmation_sent_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The attempt at its confirmation email waiting in the task queue, or running; empty once
    # sent or given up. orders.tasks finds an attempt lost with its worker by it.
    confirmation_task_id = models.CharField(max_length=64, blank=True, editable=False)

    # The order's tickets as its answer shows them, kept on it by the service or selector that
    # loaded or sold them (orders.selectors.tickets_of), so serializing it reads nothing more.
    sold_tickets: list["Ticket"]

    class Meta:
        ordering = ["-created_at"]
        permissions = [("cancel_any_order", "Can cancel any order, past the deadline too")]
        indexes = [
            models.Index(
                fields=["hold_expires_at"],
                name="order_holds_due",
                condition=Q(status="held"),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                name="held_order_has_expiry",
                condition=~Q(status="held") | Q(hold_expires_at__isnull=False),
            ),
        ]

    def __str__(self):
        return self.confirmation_code


class Refund(models.Model):
    """Money due back for a cancelled ticket of a paid order; paying it is outside the service."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="refunds")
    ticket = models.OneToOneField("tickets.Ticket", on_delete=models.PROTECT, related_name="refund")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    created_at = models.DateTimeField(auto_now_add=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Empty: the museum called the event off.",
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.amount} for {self.ticket}"
