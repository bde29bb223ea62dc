"""A group's request and, once approved, its visit: the places it holds while staff answer, the
group order it becomes, its invoice's terms and how many came."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from hours.models import EntrySlot
from museum import i18n
from orders.models import Order, VisitorCategory


class OrganisationKind(models.TextChoices):
    SCHOOL = "school", "School"
    COMPANY = "company", "Company"
    ASSOCIATION = "association", "Association"


class GroupStatus(models.TextChoices):
    # Its places held until `expires_at`, waiting for staff.
    REQUESTED = "requested", "Requested"
    # Staff offered another time (its places moved there), waiting for the group.
    OFFERED = "offered", "Another time offered"
    # A group order: confirmed, invoiced, paid later.
    APPROVED = "approved", "Approved"
    DECLINED = "declined", "Declined"
    # Not answered in time: its places went back.
    EXPIRED = "expired", "Expired"
    CANCELLED = "cancelled", "Cancelled"


# The states whose places are held on the request's rows (`places`), not yet an order's.
HOLDING = (GroupStatus.REQUESTED, GroupStatus.OFFERED)


class GroupRequest(models.Model):
    """A group's request: who, when (a date and, on a timed day, an entry time, with
    alternatives), how many of each category, and a guided tour if wanted. While it waits it
    holds `places` on its day (and slot) in the sale's own count (hours.locking); approved, it is
    its group order's (`order`) record of the visit: terms of payment, the final-numbers date,
    arrivals."""

    code = models.CharField(max_length=40, unique=True)
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="group_requests",
        help_text="Empty: sent through the public form.",
    )
    organisation = models.CharField(max_length=200)
    organisation_kind = models.CharField(max_length=12, choices=OrganisationKind.choices)
    contact_name = models.CharField(max_length=100)
    email = models.EmailField()
    # The mailbox `email` reaches (orders.services.limits.mailbox_of): what its email limit counts.
    mailbox = models.CharField(max_length=254, db_index=True, editable=False)
    phone = models.CharField(max_length=32, blank=True)
    address = models.CharField("invoice address", max_length=500, blank=True)
    vat_id = models.CharField("VAT id", max_length=40, blank=True)
    # The language its emails, invoice and tour speak (MUSEUM_LANGUAGES).
    language = models.CharField(max_length=8, default=i18n.museum_language_code)
    date = models.DateField(db_index=True)
    entry_time = models.TimeField(null=True, blank=True)
    # The slot its places are held on (a timed day); on an untimed day only the day counts them.
    slot = models.ForeignKey(
        EntrySlot, on_delete=models.PROTECT, null=True, blank=True, related_name="group_requests"
    )
    # Other times that would suit: [{"date": "2026-12-03", "time": "10:00" or null}, ...].
    alternatives = models.JSONField(default=list, blank=True)
    age_group = models.CharField("age or school year", max_length=100, blank=True)
    accessibility = models.TextField("accessibility needs", blank=True)
    tour = models.ForeignKey(
        "groups.TourProgramme",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="requests",
    )
    comment = models.TextField(blank=True)
    status = models.CharField(
        max_length=10, choices=GroupStatus.choices, default=GroupStatus.REQUESTED
    )
    # The places it holds on its rows now (its headcount while requested or offered, else 0).
    places = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(null=True, blank=True)
    # Staff's words to the group: why declined, or about the time offered.
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    answered_at = models.DateTimeField(null=True, blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    # Approved: its group order, and the terms its invoice states.
    order = models.OneToOneField(
        Order, on_delete=models.PROTECT, null=True, blank=True, related_name="group"
    )
    deposit = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    deposit_due = models.DateField(null=True, blank=True)
    balance_due = models.DateField(null=True, blank=True)
    final_numbers_date = models.DateField(null=True, blank=True)
    deposit_reminded_at = models.DateTimeField(null=True, blank=True)
    balance_reminded_at = models.DateTimeField(null=True, blank=True)
    # The day: how many came (recorded at the door), or a no-show (marked at the desk).
    arrived = models.PositiveIntegerField(null=True, blank=True)
    arrived_at = models.DateTimeField(null=True, blank=True)
    no_show = models.BooleanField(default=False)

    # What it would cost as it stands, where a face that answers one request put it
    # (groups.services.pricing.estimate); else unset.
    estimate: "Decimal | None"

    class Meta:
        ordering = ["date", "entry_time", "created_at"]
        verbose_name = "group request"
        permissions = [
            ("answer_group_requests", "Can approve, move or decline group requests"),
        ]
        indexes = [
            models.Index(
                fields=["expires_at"],
                name="group_requests_due",
                condition=Q(status__in=["requested", "offered"]),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                name="group_holds_only_while_waiting",
                condition=Q(status__in=HOLDING, expires_at__isnull=False) | Q(places=0),
            ),
            models.CheckConstraint(
                name="approved_group_has_order",
                condition=~Q(status="approved") | Q(order__isnull=False),
            ),
            models.CheckConstraint(
                name="group_arrivals_or_no_show",
                condition=Q(no_show=False) | Q(arrived__isnull=True),
            ),
        ]

    def __str__(self):
        return f"{self.organisation} ({self.code})"

    @property
    def headcount(self) -> int:
        """Its people, all categories (its lines, as loaded)."""
        return sum(line.quantity for line in self.lines.all())

    def ran_out(self, now=None) -> bool:
        """Whether it waited past `expires_at` unanswered: the one answer to "has this request
        run out?" (expired, or due and not yet swept)."""
        if self.status == GroupStatus.EXPIRED:
            return True
        now = now or timezone.now()
        return self.status in HOLDING and self.expires_at is not None and self.expires_at <= now


class GroupLine(models.Model):
    """How many of one visitor category a group brings."""

    request = models.ForeignKey(GroupRequest, on_delete=models.CASCADE, related_name="lines")
    category = models.ForeignKey(VisitorCategory, on_delete=models.PROTECT, related_name="+")
    quantity = models.PositiveIntegerField()

    class Meta:
        ordering = ["request", "category__ordering", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["request", "category"], name="one_group_line_a_category"
            ),
            models.CheckConstraint(name="group_line_not_empty", condition=Q(quantity__gte=1)),
        ]

    def __str__(self):
        return f"{self.quantity} × {self.category_id}"
