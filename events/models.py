import uuid

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from museum.money import tax_rate_field
from museum.text import multiline_text, one_line_text

NAME_MAX_LENGTH = 200
LOCATION_MAX_LENGTH = 200
DESCRIPTION_MAX_LENGTH = 5000
MAX_DATES_PER_EVENT = 366


class SpecialEventQuerySet(models.QuerySet):
    def active(self):
        return self.filter(cancelled_at__isnull=True)


class SpecialEvent(models.Model):
    """A special event in the museum's programme, held on one or more dates."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Shown on one line (tickets, email subjects): no control characters, no line breaks.
    name = models.CharField(max_length=NAME_MAX_LENGTH, validators=[one_line_text])
    location = models.CharField(max_length=LOCATION_MAX_LENGTH, validators=[one_line_text])
    description = models.TextField(max_length=DESCRIPTION_MAX_LENGTH, validators=[multiline_text])
    price = models.DecimalField(
        max_digits=8, decimal_places=2, validators=[MinValueValidator(0)], help_text="Per ticket."
    )
    tax_rate = tax_rate_field("Of its tickets, whatever their visitor category.")
    capacity = models.PositiveIntegerField(
        null=True, blank=True, help_text="Places per date; empty means unlimited."
    )
    # When it runs on each of its dates, in the museum's zone: the tickets, their email and
    # calendar entry say these rather than the day's opening hours. Empty: the day's hours.
    starts_at = models.TimeField(
        "starts at", null=True, blank=True, help_text="On each date; empty: the day's opening."
    )
    ends_at = models.TimeField(
        "ends at", null=True, blank=True, help_text="After it starts; empty: the day's closing."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Deleting through the API cancels: sold tickets keep pointing at a real event.
    cancelled_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = SpecialEventQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = "special event"
        constraints = [
            models.CheckConstraint(name="event_price_not_negative", condition=Q(price__gte=0)),
            models.CheckConstraint(
                name="event_tax_rate_not_negative", condition=Q(tax_rate__gte=0)
            ),
            models.CheckConstraint(
                name="event_ends_after_it_starts",
                condition=Q(ends_at__isnull=True)
                | Q(starts_at__isnull=False, ends_at__gt=F("starts_at")),
                violation_error_message="An event ends after it starts, and has a start to end.",
            ),
        ]

    def __str__(self):
        return self.name


class EventDate(models.Model):
    """A date an event runs on; its own row so date-range reads use an index."""

    event = models.ForeignKey(SpecialEvent, on_delete=models.CASCADE, related_name="dates")
    date = models.DateField()
    # The event's capacity is copied here so that the row that counts places also holds the
    # limit: the database checks sold <= capacity, and a purchase is one conditional UPDATE.
    capacity = models.PositiveIntegerField(null=True, blank=True, editable=False)
    sold = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["date"]
        verbose_name = "event date"
        indexes = [
            # The list reads the dates in a range and joins their events: with the event in the
            # index that is an index-only scan, not a visit to each date's row.
            models.Index(fields=["date", "event"], name="event_dates_in_range"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["event", "date"], name="event_date_once"),
            models.CheckConstraint(
                name="event_date_not_oversold",
                condition=Q(capacity__isnull=True) | Q(sold__lte=F("capacity")),
            ),
        ]

    def __str__(self):
        return f"{self.event.name} on {self.date}"
