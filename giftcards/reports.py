"""What staff and the accountant read of the gift cards, all from the ledger (Transaction), each
table one aggregate query:

- the liability at a date: what every issued card held at the end of that day (the sum of its
  ledger up to then), split into cards still spendable that day and cards expired by then, with
  what made it (issued − redeemed + credited ± adjusted);
- per month: issued, redeemed, credited back and adjusted;
- per year of expiry: what the cards that have expired held on their last day, and hold now
  (a refund credited onto an expired card, or staff honouring one, moves it after).

Days and months are the museum's (TIME_ZONE): a transaction at 23:30 on 31 December in
Amsterdam belongs to December there.
"""

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.db.models import Count, DateField, F, Q, Sum
from django.db.models.functions import ExtractYear, TruncMonth
from django.utils import timezone

from giftcards.models import Transaction, TransactionKind
from museum.money import ZERO

KINDS = [kind.value for kind in TransactionKind]


def end_of(day: date) -> datetime:
    """The first moment after `day`, the museum's."""
    return timezone.make_aware(datetime.combine(day + timedelta(days=1), time.min))


def _sum(**conditions) -> Sum:
    return Sum("amount", filter=Q(**conditions), default=ZERO)


@dataclass(frozen=True)
class Liability:
    """What the museum owes on its gift cards at the end of `day`."""

    day: date
    active: Decimal
    expired: Decimal
    active_cards: int
    expired_cards: int
    # What made it: each kind of move's sum up to then (redeemed negative, adjusted either way).
    by_kind: dict[str, Decimal] = field(default_factory=dict)

    @property
    def total(self) -> Decimal:
        return self.active + self.expired


def liability(*, day: date) -> Liability:
    """The sum of every issued card's ledger up to the end of `day`, split by whether the card
    could still be spent that day (an issued card only has moves: its first is its issue)."""
    expired = Q(card__expires_on__lt=day)
    sums = Transaction.objects.filter(at__lt=end_of(day)).aggregate(
        active=Sum("amount", filter=~expired, default=ZERO),
        expired=Sum("amount", filter=expired, default=ZERO),
        active_cards=Count("card", filter=~expired, distinct=True),
        expired_cards=Count("card", filter=expired, distinct=True),
        **{kind: _sum(kind=kind) for kind in KINDS},
    )
    return Liability(
        day=day,
        active=sums["active"],
        expired=sums["expired"],
        active_cards=sums["active_cards"],
        expired_cards=sums["expired_cards"],
        by_kind={kind: sums[kind] for kind in KINDS},
    )


@dataclass(frozen=True)
class MonthLine:
    """One month's moves: cards issued and their value, and the sums of each other kind."""

    month: date
    cards_issued: int
    issued: Decimal
    redeemed: Decimal
    credited: Decimal
    adjusted: Decimal

    @property
    def net(self) -> Decimal:
        """What the month added to the liability (negative: took off it)."""
        return self.issued + self.redeemed + self.credited + self.adjusted


def per_month(*, first: date, last: date) -> list[MonthLine]:
    """The months from `first`'s to `last`'s with any move, oldest first."""
    start = timezone.make_aware(datetime.combine(first.replace(day=1), time.min))
    rows = (
        Transaction.objects.filter(at__gte=start, at__lt=end_of(last))
        .annotate(month=TruncMonth("at", output_field=DateField()))
        .values("month")
        .annotate(
            cards_issued=Count("pk", filter=Q(kind=TransactionKind.ISSUED)),
            **{kind: _sum(kind=kind) for kind in KINDS},
        )
        .order_by("month")
    )
    return [MonthLine(**row) for row in rows]


@dataclass(frozen=True)
class ExpiryLine:
    """The cards whose last day fell in `year`, past now: how many, what they held at the end of
    their last day, and what they hold now."""

    year: int
    cards: int
    at_expiry: Decimal
    now: Decimal


def expired_per_year(*, today: date | None = None) -> list[ExpiryLine]:
    """Every year of expiry with cards expired by `today` (today's default), oldest first."""
    today = today or timezone.localdate()
    rows = (
        Transaction.objects.filter(card__expires_on__lt=today)
        .annotate(year=ExtractYear("card__expires_on"))
        .values("year")
        .annotate(
            cards=Count("card", distinct=True),
            at_expiry=_sum(at__date__lte=F("card__expires_on")),
            now=Sum("amount", default=ZERO),
        )
        .order_by("year")
    )
    return [ExpiryLine(**row) for row in rows]
