"""Guided tours: the museum's programmes, its guides (their languages, audiences and when they
work), and the guides a group's tour needs, each assigned and answered."""

import secrets
from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from museum.money import tax_rate_field

from .requests import GroupRequest


class FeePer(models.TextChoices):
    TOUR = "tour", "per tour"
    GUIDE = "guide", "per guide"


class TourProgramme(models.Model):
    """A guided tour a group may book: how long, in which languages, for which audiences
    (OrganisationKind), at most how many people a guide leads (a group needs
    ceil(headcount / max_people_per_guide) guides), and its fee, per tour or per guide."""

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    duration_minutes = models.PositiveSmallIntegerField(
        "duration (minutes)", default=60, validators=[MinValueValidator(1)]
    )
    # Language codes (MUSEUM_LANGUAGES), e.g. ["en", "de"].
    languages = models.JSONField(default=list)
    # OrganisationKind values, e.g. ["school"].
    audiences = models.JSONField(default=list)
    max_people_per_guide = models.PositiveSmallIntegerField(
        "most people per guide", default=25, validators=[MinValueValidator(1)]
    )
    fee = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0"), validators=[MinValueValidator(0)]
    )
    fee_per = models.CharField(max_length=5, choices=FeePer.choices, default=FeePer.TOUR)
    tax_rate = tax_rate_field("Of its fee (admission may be at another rate).")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "tour programme"
        constraints = [
            models.CheckConstraint(name="tour_fee_not_negative", condition=Q(fee__gte=0)),
            models.CheckConstraint(
                name="tour_cap_positive", condition=Q(max_people_per_guide__gte=1)
            ),
            models.CheckConstraint(name="tour_lasts", condition=Q(duration_minutes__gte=1)),
        ]

    def __str__(self):
        return self.name

    def guides_needed(self, headcount: int) -> int:
        """ceil(headcount / max_people_per_guide): 40 people at 25 a guide need 2."""
        return -(-headcount // self.max_people_per_guide) if headcount else 0

    def fee_for(self, headcount: int) -> Decimal:
        """What the tour costs a group of `headcount`: its fee once, or once per guide."""
        if self.fee_per == FeePer.GUIDE:
            return self.fee * self.guides_needed(headcount)
        return self.fee


def new_feed_token() -> str:
    return secrets.token_urlsafe(24)


class Guide(models.Model):
    """A guide: the languages and audiences they lead, their weekly hours and exceptions, and
    their account (which sees its own calendar) and calendar feed's secret."""

    name = models.CharField(max_length=100)
    email = models.EmailField()
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="guide",
    )
    languages = models.JSONField(default=list)
    audiences = models.JSONField(default=list)
    # The secret in its iCal feed's address; a new one cuts off the old address.
    feed_token = models.CharField(max_length=64, unique=True, default=new_feed_token)
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class GuideAvailability(models.Model):
    """A guide works every `weekday` (0 Monday) from `starts` to `ends`."""

    guide = models.ForeignKey(Guide, on_delete=models.CASCADE, related_name="availability")
    weekday = models.PositiveSmallIntegerField(
        choices=[
            (0, "Monday"),
            (1, "Tuesday"),
            (2, "Wednesday"),
            (3, "Thursday"),
            (4, "Friday"),
            (5, "Saturday"),
            (6, "Sunday"),
        ]
    )
    starts = models.TimeField()
    ends = models.TimeField()

    class Meta:
        ordering = ["guide", "weekday", "starts"]
        verbose_name_plural = "guide availability"
        constraints = [
            models.CheckConstraint(
                name="availability_ends_after_start", condition=Q(ends__gt=F("starts"))
            ),
            models.CheckConstraint(name="availability_weekday", condition=Q(weekday__lte=6)),
        ]

    def __str__(self):
        return f"{self.get_weekday_display()} {self.starts:%H:%M}-{self.ends:%H:%M}"


class GuideAbsence(models.Model):
    """An exception to a guide's week on one date: away (`available` False; the whole day when
    no times are given), or working extra hours (`available` True, from `starts` to `ends`)."""

    guide = models.ForeignKey(Guide, on_delete=models.CASCADE, related_name="exceptions")
    date = models.DateField()
    starts = models.TimeField(null=True, blank=True)
    ends = models.TimeField(null=True, blank=True)
    available = models.BooleanField(default=False)

    class Meta:
        ordering = ["guide", "date", "starts"]
        verbose_name = "guide's exception"
        constraints = [
            models.CheckConstraint(
                name="exception_times_both_or_none",
                condition=Q(starts__isnull=True, ends__isnull=True)
                | Q(starts__isnull=False, ends__isnull=False, ends__gt=F("starts")),
            ),
            models.CheckConstraint(
                name="extra_hours_have_times",
                condition=Q(available=False) | Q(starts__isnull=False),
            ),
        ]

    def __str__(self):
        return f"{self.date} ({'extra hours' if self.available else 'away'})"


class AssignmentState(models.TextChoices):
    OPEN = "open", "No guide yet"
    ASKED = "asked", "Asked, no answer yet"
    CONFIRMED = "confirmed", "Confirmed by the guide"
    DECLINED = "declined", "Declined by the guide"


class GuideAssignment(models.Model):
    """One of the guides a group's tour needs, from `starts` to `ends`: open until staff assign
    a guide, then asked until the guide answers by the email's signed link."""

    group = models.ForeignKey(GroupRequest, on_delete=models.CASCADE, related_name="assignments")
    guide = models.ForeignKey(
        Guide, on_delete=models.PROTECT, null=True, blank=True, related_name="assignments"
    )
    starts = models.DateTimeField(db_index=True)
    ends = models.DateTimeField()
    state = models.CharField(
        max_length=10, choices=AssignmentState.choices, default=AssignmentState.OPEN
    )
    asked_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    # The fee this guide's share earns (the report per guide and month); fixed at approval.
    fee = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0"))

    class Meta:
        ordering = ["starts", "pk"]
        constraints = [
            models.CheckConstraint(
                name="assignment_ends_after_start", condition=Q(ends__gt=F("starts"))
            ),
            models.CheckConstraint(
                name="assignment_guide_unless_open",
                condition=Q(state="open", guide__isnull=True)
                | (~Q(state="open") & Q(guide__isnull=False)),
            ),
        ]

    def __str__(self):
        return f"{self.guide or 'no guide'}, {self.starts:%Y-%m-%d %H:%M}"
