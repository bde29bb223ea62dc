"""Vouchers: what lowers a sale's price.

A voucher is a code that changes what a visit's tickets cost (free, a set price, an amount or a
percentage off) for the visits it is scoped to, as often as its uses allow and for as much
discount as its budget allows. A voucher with such a limit (or places kept) is `counted`: its
`uses` and `discount_given` are counters taken and given back under the sale's locks
(orders.services.vouchers), and the constraints here back that up. One without (a promotion
code anyone may use) is neither locked nor written by a sale, so its buyers never queue on its
row: what it gave is what its tickets say, as for every voucher (`Ticket.voucher`,
`Ticket.discount`). A voucher
that keeps places holds back, on its one slot, day or event date, a place for each use it has
left while it is valid, counted by hours.locking in the same statement as the members' places.
"""

from decimal import Decimal

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from events.models import EventDate, SpecialEvent
from hours.models import EntrySlot
from museum.money import ZERO

from .catalogue import VisitorCategory


class VoucherEffect(models.TextChoices):
    FREE = "free", "Free"
    SET_PRICE = "set_price", "A set price"
    AMOUNT_OFF = "amount_off", "An amount off"
    PERCENT_OFF = "percent_off", "A percentage off"


class VoucherChannel(models.TextChoices):
    """Where a voucher may be used: a buyer's own purchase, the desk, a sales partner's API
    order on account, or a reseller through OCTO."""

    ONLINE = "online", "Online"
    DESK = "desk", "Front desk"
    PARTNER = "partner", "Sales partners"
    OCTO = "octo", "OCTO resellers"


def every_channel() -> list[str]:
    return list(VoucherChannel.values)


class Voucher(models.Model):
    """A code for free or reduced entry: comp tickets, a school's, a partner's allotment, a
    promo code."""

    # Kept upper-case; read case-insensitively (orders.services.vouchers.normalized).
    code = models.CharField(max_length=40, unique=True)
    effect = models.CharField(max_length=12, choices=VoucherEffect.choices)
    value = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=ZERO,
        validators=[MinValueValidator(Decimal("0"))],
        help_text="The set price, the amount off, or the percentage off; unused when free.",
    )
    stacks = models.BooleanField(
        "stacks with a member's discount",
        default=False,
        help_text="Off: a member's line takes the better of the two.",
    )
    # Scope: empty or null is any.
    ticket_type = models.CharField(
        "kind of visit",
        max_length=10,
        blank=True,
        choices=[("general", "General entry"), ("event", "Special events")],
        help_text="Empty: both.",
    )
    categories = models.ManyToManyField(
        VisitorCategory, blank=True, related_name="vouchers", help_text="Empty: every category."
    )
    events: models.ManyToManyField = models.ManyToManyField(
        SpecialEvent, blank=True, related_name="vouchers", help_text="Empty: every event."
    )
    visit_from = models.DateField("visits from", null=True, blank=True)
    visit_until = models.DateField("visits until", null=True, blank=True)
    entry_from = models.TimeField(
        "slots from", null=True, blank=True, help_text="Timed entry: slots starting then or later."
    )
    entry_until = models.TimeField(
        "slots until", null=True, blank=True, help_text="Timed entry: slots starting by then."
    )
    channels = models.JSONField(default=every_channel, help_text="Where it may be used.")
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    max_uses = models.PositiveIntegerField(
        null=True, blank=True, help_text="Tickets it may reduce in all; empty: no limit."
    )
    uses = models.PositiveIntegerField(default=0, editable=False)
    budget = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
        help_text="The most discount it may give in all; empty: no limit.",
    )
    discount_given = models.DecimalField(
        max_digits=10, decimal_places=2, default=ZERO, editable=False
    )
    # Places held back for its remaining uses, on one row that counts places.
    keep_slot = models.ForeignKey(
        EntrySlot, null=True, blank=True, on_delete=models.SET_NULL, related_name="vouchers"
    )
    # A date, not a key: deleting days by the tens of thousands would otherwise clear this
    # with one UPDATE of more parameters than a statement may carry (Django's collector joins
    # its SET_NULL updates); a day gone keeps nothing here, as there is no row to count on.
    keep_day = models.DateField(
        "keeps places on the day",
        null=True,
        blank=True,
        help_text="A museum day's date: its general entry.",
    )
    keep_event_date = models.ForeignKey(
        EventDate, null=True, blank=True, on_delete=models.SET_NULL, related_name="vouchers"
    )
    tag = models.CharField(max_length=60, blank=True, db_index=True)
    comment = models.TextField("internal comment", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                name="voucher_uses_within_max",
                condition=Q(max_uses__isnull=True) | Q(uses__lte=F("max_uses")),
            ),
            models.CheckConstraint(
                name="voucher_discount_within_budget",
                condition=Q(budget__isnull=True) | Q(discount_given__lte=F("budget")),
            ),
            models.CheckConstraint(
                name="voucher_discount_not_negative", condition=Q(discount_given__gte=0)
            ),
            models.CheckConstraint(
                name="voucher_percent_at_most_100",
                condition=~Q(effect="percent_off") | Q(value__lte=100),
            ),
            models.CheckConstraint(
                name="voucher_keeps_one_row",
                condition=(
                    Q(keep_slot__isnull=True, keep_day__isnull=True)
                    | Q(keep_slot__isnull=True, keep_event_date__isnull=True)
                    | Q(keep_day__isnull=True, keep_event_date__isnull=True)
                ),
            ),
        ]

    def __str__(self):
        return self.code

    @property
    def keeps_places(self) -> bool:
        return bool(self.keep_slot_id or self.keep_day or self.keep_event_date_id)

    @property
    def counted(self) -> bool:
        """Whether a sale counts its uses and discount on its row (it has a limit to keep)."""
        return self.max_uses is not None or self.budget is not None or self.keeps_places

    @staticmethod
    def are_counted() -> Q:
        """`counted` as a filter."""
        return Q(max_uses__isnull=False) | Q(budget__isnull=False) | Voucher.keep_places()

    @staticmethod
    def keep_places() -> Q:
        """`keeps_places` as a filter."""
        return (
            Q(keep_slot__isnull=False)
            | Q(keep_day__isnull=False)
            | Q(keep_event_date__isnull=False)
        )

    @property
    def uses_left(self) -> int | None:
        return None if self.max_uses is None else max(self.max_uses - self.uses, 0)

    def valid_at(self, now=None) -> bool:
        """Whether it may be used now: within its validity."""
        now = now or timezone.now()
        return (self.valid_from is None or self.valid_from <= now) and (
            self.valid_until is None or now < self.valid_until
        )
