import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from events.models import EventDate, SpecialEvent
from hours.models import MuseumDay


class TicketType(models.TextChoices):
    # Shown at the door, in the staff member's language.
    EVENT = "event", _("Special event")
    GENERAL = "general", _("General entry")


class Ticket(models.Model):
    """One admission, for one day: general entry, or one date of a special event."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    buyer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tickets"
    )
    ticket_type = models.CharField("type", max_length=10, choices=TicketType.choices)
    date = models.DateField(db_index=True)
    event = models.ForeignKey(
        SpecialEvent, on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )
    # The row that counts the ticket's place: PROTECT, so that row (and its count) cannot be
    # deleted while a ticket needs it. A general ticket's day is its date (MuseumDay's key).
    museum_day = models.ForeignKey(
        MuseumDay, on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )
    event_date = models.ForeignKey(
        EventDate, on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )
    price = models.DecimalField("price paid", max_digits=8, decimal_places=2)
    confirmation_code = models.CharField(max_length=40, unique=True)
    purchased_at = models.DateTimeField(auto_now_add=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    # Who cancelled it: empty when a hold ran out or the museum called its event off.
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    checked_in_at = models.DateTimeField(null=True, blank=True)
    checked_in_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    # The sale it belongs to, which keeps the buyer's contact data, the total and the email.
    # A lazy reference: the sale is the layer above (orders imports tickets, never the reverse).
    order = models.ForeignKey("orders.Order", on_delete=models.PROTECT, related_name="tickets")
    # Its order is held, not confirmed: not valid at the door yet. Kept on the ticket so that
    # admission asks the ticket alone, as it does for cancelled_at.
    held = models.BooleanField(default=False)
    category = models.ForeignKey(
        "orders.VisitorCategory",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="tickets",
    )
    slot = models.ForeignKey(
        "hours.EntrySlot", on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )

    class Meta:
        ordering = ["-purchased_at"]
        # Seeing every ticket is Django's own view_ticket; letting holders in is this one.
        permissions = [("check_in_ticket", "Can check tickets in at the door")]
        constraints = [
            models.CheckConstraint(
                name="event_ticket_has_event",
                condition=Q(ticket_type="event", event__isnull=False)
                | Q(ticket_type="general", event__isnull=True),
            ),
            models.CheckConstraint(
                name="ticket_counted_on_its_row",
                condition=Q(ticket_type="event", event_date__isnull=False, museum_day__isnull=True)
                | Q(ticket_type="general", event_date__isnull=True, museum_day=F("date")),
            ),
        ]

    def __str__(self):
        return self.confirmation_code

    @property
    def is_event_ticket(self) -> bool:
        return self.ticket_type == TicketType.EVENT


class TicketImage(models.Model):
    """The rendered PNG of a ticket, kept so each image is drawn once, not on every request."""

    ticket = models.OneToOneField(
        Ticket, on_delete=models.CASCADE, primary_key=True, related_name="image"
    )
    png = models.BinaryField()
    etag = models.CharField(max_length=64)
    rendered_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Image of {self.ticket_id}"
