from django.db import models
from django.db.models import F, Q


class MuseumDay(models.Model):
    """A day of the museum: open with its hours, or closed (kept, so seeding won't reopen it)."""

    date = models.DateField(primary_key=True)
    opens_at = models.TimeField("opens at", null=True, blank=True)
    closes_at = models.TimeField("closes at", null=True, blank=True)
    is_closed = models.BooleanField(
        "closed", default=False, help_text="Closed all day; the API does not list the day."
    )
    note = models.CharField(
        max_length=200, blank=True, help_text="Why the day differs, e.g. 'Closed for a holiday'."
    )
    capacity = models.PositiveIntegerField(
        null=True, blank=True, help_text="General-entry tickets for the day; empty means unlimited."
    )
    sold = models.PositiveIntegerField(
        default=0, editable=False, help_text="General-entry tickets sold."
    )
    edited_by_staff = models.BooleanField(
        default=False,
        help_text="Set when staff change the day; seed_hours then leaves it alone.",
    )

    class Meta:
        ordering = ["date"]
        verbose_name = "museum day"
        constraints = [
            models.CheckConstraint(
                name="open_day_has_hours",
                condition=Q(is_closed=True)
                | Q(opens_at__isnull=False, closes_at__isnull=False, opens_at__lt=F("closes_at")),
            ),
            models.CheckConstraint(
                name="museum_day_not_oversold",
                condition=Q(capacity__isnull=True) | Q(sold__lte=F("capacity")),
            ),
        ]

    def __str__(self):
        if self.is_closed:
            return f"{self.date:%a %Y-%m-%d}: closed"
        return f"{self.date:%a %Y-%m-%d}: {self.opens_at:%H:%M}-{self.closes_at:%H:%M}"


class EntrySlot(models.Model):
    """A timed-entry slot of an open day: visitors booked for it enter from its time on."""

    # A day removed by a weekly pattern takes its empty slots along; a slot's tickets protect it.
    day = models.ForeignKey(MuseumDay, on_delete=models.CASCADE, related_name="slots")
    entry_time = models.TimeField("entry time")
    capacity = models.PositiveIntegerField(
        null=True, blank=True, help_text="Tickets for the slot; empty means unlimited."
    )
    # Places taken by confirmed and held orders alike: a hold keeps its places until it expires.
    sold = models.PositiveIntegerField(default=0, editable=False)
    # Of `capacity`, the places kept for members until MUSEUM_MEMBER_PLACES_RELEASE_HOURS before
    # the slot; `member_sold` of `sold` are members' (who take kept places first). Before the
    # cut-off a public sale leaves the unclaimed kept places alone (hours.locking).
    member_places = models.PositiveIntegerField(
        "places kept for members",
        default=0,
        help_text="Sold to anyone only from the cut-off before the slot on.",
    )
    member_sold = models.PositiveIntegerField(default=0, editable=False)

    # What the slots list shows, set by hours.services.slots_on_sale.
    available: int | None
    over: bool

    class Meta:
        ordering = ["day", "entry_time"]
        verbose_name = "entry slot"
        constraints = [
            models.UniqueConstraint(fields=["day", "entry_time"], name="slot_once_a_day"),
            models.CheckConstraint(
                name="entry_slot_not_oversold",
                condition=Q(capacity__isnull=True) | Q(sold__lte=F("capacity")),
            ),
            models.CheckConstraint(
                name="entry_slot_member_sold_within_sold",
                condition=Q(member_sold__lte=F("sold")),
            ),
        ]

    def __str__(self):
        return f"{self.day_id} {self.entry_time:%H:%M}"
