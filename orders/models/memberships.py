"""Memberships: a holder's periods of a type, the card it carries (kept drawn), a replaced
card the door still knows, and the people a card let in on a day without slots."""

import uuid
from datetime import date
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from museum import i18n

from .catalogue import MembershipType

if TYPE_CHECKING:
    from .sale import Order


class MembershipStatus(models.TextChoices):
    # Bought, not paid yet (or a gift not redeemed yet: it has no holder).
    PENDING = "pending", "Pending (not paid, or a gift not redeemed)"
    ACTIVE = "active", "Active"
    EXPIRED = "expired", "Expired"
    CANCELLED = "cancelled", "Cancelled"


class Validity(models.TextChoices):
    """Whether a membership admits on a day, and if not, why (Membership.validity_on)."""

    VALID = "valid", "Valid"
    PENDING = "pending", "Not paid yet (or a gift not redeemed)"
    NOT_YET_VALID = "not_yet_valid", "Not valid yet"
    EXPIRED = "expired", "Expired"
    CANCELLED = "cancelled", "Cancelled"


class Membership(models.Model):
    """A holder's membership of a type, valid from `valid_from` to `valid_until` (both included),
    the periods its confirmed sales (MembershipSale) bought. Its card carries a signed token of
    its id; `card_code` is what the desk finds it by and a member may type instead."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    membership_type = models.ForeignKey(
        MembershipType, on_delete=models.PROTECT, related_name="memberships"
    )
    # The account that bought it: its own list shows it.
    buyer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="memberships"
    )
    # Empty for a gift until it is redeemed.
    holder_name = models.CharField(max_length=100, blank=True)
    email = models.EmailField(blank=True)
    language = models.CharField(max_length=8, default=i18n.museum_language_code)
    status = models.CharField(
        max_length=10, choices=MembershipStatus.choices, default=MembershipStatus.PENDING
    )
    valid_from = models.DateField(null=True, blank=True)
    valid_until = models.DateField(null=True, blank=True, db_index=True)
    card_code = models.CharField(max_length=40, unique=True)
    # What its card's token is signed with besides the museum's key: empty until the card is
    # replaced (orders.services.member_cards.reissue_card), so that a lost card's token stops
    # verifying. Never shown.
    card_secret = models.CharField(
        max_length=64, blank=True, default="", db_default="", editable=False
    )
    # A gift's code, shown to its buyer; redeeming it names the holder and starts the validity.
    gift_code = models.CharField(max_length=40, unique=True, null=True, blank=True)
    redeemed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    activated_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    # The renewal reminders sent (30 and 7 days before valid_until), each once per period.
    reminded_30_at = models.DateTimeField(null=True, blank=True, editable=False)
    reminded_7_at = models.DateTimeField(null=True, blank=True, editable=False)

    # The order that sold it, kept on it by the sale for its answer
    # (orders.services.memberships.sell_membership).
    order: "Order"

    class Meta:
        ordering = ["-created_at"]
        permissions = [("sell_memberships", "Can sell and renew memberships at the front desk")]
        constraints = [
            models.CheckConstraint(
                name="active_membership_has_validity",
                condition=~Q(status__in=["active", "expired"])
                | Q(valid_from__isnull=False, valid_until__isnull=False),
            ),
            models.CheckConstraint(
                name="membership_valid_until_after_from",
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=F("valid_from")),
            ),
        ]

    def __str__(self):
        return self.card_code

    def validity_on(self, day: date) -> str:
        """Whether it admits on `day` (Validity.VALID) or why not: the one answer every rule,
        door and report asks. One whose last day has passed is expired whether or not the sweep
        that marks it (orders.services.memberships.expire_lapsed) has run yet."""
        if self.status == MembershipStatus.CANCELLED:
            return Validity.CANCELLED
        if self.status == MembershipStatus.PENDING or self.valid_from is None:
            return Validity.PENDING
        if self.status == MembershipStatus.EXPIRED or (
            self.valid_until is not None and self.valid_until < day
        ):
            return Validity.EXPIRED
        if day < self.valid_from:
            return Validity.NOT_YET_VALID
        return Validity.VALID

    def admitted_anyone(self, first: date, last: date) -> bool:
        """Whether it let anyone in from `first` to `last`: a member visit's ticket checked in,
        or a walk-in at the door. What makes it used (its buyer may no longer cancel it); a visit
        booked and not admitted does not count: it is cancelled with the membership."""
        from .sale import Ticket  # the sale imports this module: its orders name a membership

        period = {"date__gte": first, "date__lte": last}
        admitted = Ticket.objects.filter(
            order__membership=self, checked_in_at__isnull=False, **period
        )
        return admitted.exists() or self.entries.filter(**period).exists()


class MembershipCard(models.Model):
    """A membership's card as a PNG and a card-sized PDF, kept so each is drawn once; `etag`
    names what it prints (holder, type, validity, language), so a change draws it again."""

    membership = models.OneToOneField(
        Membership, on_delete=models.CASCADE, primary_key=True, related_name="card"
    )
    png = models.BinaryField()
    pdf = models.BinaryField()
    etag = models.CharField(max_length=64)
    made_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "membership card"

    def __str__(self):
        return f"Card of {self.membership_id}"


class ReplacedCard(models.Model):
    """A member card replaced by a new one (lost, stolen): its code and what its token was signed
    with, so that the door tells it apart from a forged or unknown card ("replaced card")."""

    membership = models.ForeignKey(
        Membership, on_delete=models.CASCADE, related_name="replaced_cards"
    )
    card_code = models.CharField(max_length=40, unique=True)
    card_secret = models.CharField(max_length=64, blank=True, editable=False)
    replaced_at = models.DateTimeField(auto_now_add=True)
    replaced_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    def __str__(self):
        return f"Card {self.card_code} (replaced)"


class MemberEntry(models.Model):
    """People a member card let in at the door on a day without entry slots (no reservation):
    at most the type's `admits` a day, counted under the membership's row lock."""

    membership = models.ForeignKey(Membership, on_delete=models.PROTECT, related_name="entries")
    date = models.DateField()
    people = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])
    entered_at = models.DateTimeField(auto_now_add=True)
    admitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-entered_at"]
        verbose_name = "member entry"
        verbose_name_plural = "member entries"
        indexes = [models.Index(fields=["membership", "date"], name="member_entries_of_day")]
        constraints = [
            models.CheckConstraint(name="member_entry_admits_someone", condition=Q(people__gte=1))
        ]

    def __str__(self):
        return f"{self.people} on {self.date} with {self.membership_id}"
