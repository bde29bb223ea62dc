"""A drop: the sale of some days, slots or event dates opened at a set minute to a crowd, through
a waiting room (drops/queue.py keeps the line in Redis; this row is what staff set), and the
waiting list of those who came after the last place."""

from datetime import datetime

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from events.models import EventDate
from hours.models import EntrySlot, MuseumDay
from orders.models import Voucher


def default_outflow() -> int:
    return settings.MUSEUM_DROP_OUTFLOW_PER_MINUTE


class Drop(models.Model):
    name = models.CharField(max_length=120)
    days = models.ManyToManyField(
        MuseumDay, blank=True, related_name="drops", help_text="General entry on these days."
    )
    slots = models.ManyToManyField(EntrySlot, blank=True, related_name="drops")
    event_dates = models.ManyToManyField(EventDate, blank=True, related_name="drops")
    prequeue_opens_at = models.DateTimeField(
        "waiting room opens at",
        help_text="Who joins from then until the sale opens is drawn a random place in line.",
    )
    opens_at = models.DateTimeField("sale opens at")
    closes_at = models.DateTimeField(
        "waiting room closes at", help_text="From then on the places sell as any others."
    )
    outflow_per_minute = models.PositiveIntegerField(
        "admissions a minute",
        default=default_outflow,
        validators=[MinValueValidator(1)],
        help_text="How many buyers in line are let in to buy each minute.",
    )
    max_tickets = models.PositiveSmallIntegerField(
        "most tickets per buyer", default=4, validators=[MinValueValidator(1)]
    )
    admission_minutes = models.PositiveSmallIntegerField(
        "minutes an admission lasts",
        default=10,
        validators=[MinValueValidator(1)],
        help_text="An admitted buyer who has not bought by then loses the turn.",
    )
    octo_allocation = models.PositiveIntegerField(
        "resellers' places",
        default=0,
        help_text="Tickets OCTO resellers may book without waiting in line; beyond, they queue.",
    )
    seed = models.BigIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="Fixes the draw of the waiting room's places (for a rehearsal); empty: random.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-opens_at"]
        constraints = [
            models.CheckConstraint(
                name="drop_times_in_order",
                condition=Q(prequeue_opens_at__lte=F("opens_at"), opens_at__lt=F("closes_at")),
            ),
            models.CheckConstraint(
                name="drop_outflow_positive", condition=Q(outflow_per_minute__gte=1)
            ),
            models.CheckConstraint(
                name="drop_max_tickets_positive", condition=Q(max_tickets__gte=1)
            ),
            models.CheckConstraint(
                name="drop_admission_positive", condition=Q(admission_minutes__gte=1)
            ),
        ]

    def __str__(self):
        return self.name

    def is_on(self, now: datetime) -> bool:
        """Whether the waiting room stands in front of the sale of its places at `now`."""
        return self.prequeue_opens_at <= now < self.closes_at

    def stage(self, now: datetime) -> str:
        """Where the drop stands at `now`, by its times (what staff read in the admin's list)."""
        if now < self.prequeue_opens_at:
            return "upcoming"
        if now < self.opens_at:
            return "waiting room open"
        if now < self.closes_at:
            return "on sale"
        return "closed"


class WaitingEntry(models.Model):
    """Someone told the drop sold out who asked to be offered a place that comes back: offered
    in the order they asked, as a single-use voucher that keeps the places for a few hours."""

    drop = models.ForeignKey(Drop, on_delete=models.CASCADE, related_name="waiting_list")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    email = models.EmailField()
    language = models.CharField(max_length=8)
    quantity = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])
    joined_at = models.DateTimeField(auto_now_add=True)
    voucher = models.OneToOneField(
        Voucher, null=True, blank=True, on_delete=models.SET_NULL, related_name="waiting_entry"
    )
    offered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["joined_at", "pk"]
        verbose_name_plural = "waiting list"
        constraints = [
            models.UniqueConstraint(fields=["drop", "account"], name="waiting_once_per_drop"),
            models.CheckConstraint(name="waiting_quantity_positive", condition=Q(quantity__gte=1)),
        ]

    def __str__(self):
        return f"{self.drop}: {self.email}"


class OfferEmail(models.Model):
    """The email telling a waiting list's entry of the places offered to it (its voucher's code
    and until when), claimed once by its task (`sent_at`) and counted toward its mailbox's
    daily limit of emails (drops.tasks)."""

    entry = models.ForeignKey(WaitingEntry, on_delete=models.CASCADE, related_name="emails")
    email = models.EmailField(max_length=254)
    # The address as every limit counts it (orders.services.limits.mailbox_of).
    mailbox = models.CharField(max_length=254, db_index=True)
    language = models.CharField(max_length=10)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Why it was not sent: its mailbox's limit reached.
    skipped = models.CharField(max_length=60, blank=True)

    class Meta:
        verbose_name = "waiting list offer email"

    def __str__(self):
        return f"offer of {self.entry_id} to {self.email}"
