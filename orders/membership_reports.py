"""What staff and the operator read of the memberships: members per type, memberships begun,
renewed and lapsed per month, member visits per day, and gifts paid for but not redeemed.

Each report is one aggregate query per table it counts from (and one for the types' names), never
one per row: the admin's report page, its CSV files and /metrics read them.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Count, DateField, Q, Sum
from django.db.models.functions import TruncMonth
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from orders.models import (
    MemberEntry,
    Membership,
    MembershipSale,
    MembershipSaleKind,
    MembershipStatus,
    MembershipType,
    OrderStatus,
    Ticket,
)


def next_month(month: date) -> date:
    """The first day of the month after `month`'s (the last day there is after December 9999)."""
    if (month.year, month.month) == (date.max.year, 12):
        return date.max
    return date(month.year + month.month // 12, month.month % 12 + 1, 1)


@dataclass(frozen=True)
class TypeMembers:
    membership_type: MembershipType
    members: int


def members_on(day: date) -> Count:
    """A membership type's memberships valid on `day`: active, and `day` within their validity
    (one that lapsed is not counted, before the sweep marks it too)."""
    return Count(
        "memberships",
        filter=Q(
            memberships__status=MembershipStatus.ACTIVE,
            memberships__valid_from__lte=day,
            memberships__valid_until__gte=day,
        ),
    )


def active_members(*, day: date) -> list[TypeMembers]:
    """Every membership type with its members on `day`."""
    kinds = MembershipType.objects.annotate(members=members_on(day))
    return [TypeMembers(kind, kind.members) for kind in kinds]  # type: ignore[attr-defined]


@dataclass
class MonthLine:
    """One month and membership type: memberships begun (first activated: bought and paid, or a
    gift redeemed), renewals confirmed (not cancelled since), and memberships that lapsed (their
    last day in the month and past, not renewed)."""

    month: date
    membership_type: MembershipType
    new: int = 0
    renewed: int = 0
    lapsed: int = 0


def members_per_month(*, first: date, last: date, today: date | None = None) -> list[MonthLine]:
    """Per month from `first`'s to `last`'s and per type, the lines with something to count,
    oldest month first. A renewal moves a membership's `valid_until`, so what lapsed is what
    has not been renewed by today, even late."""
    today = today or timezone.localdate()
    start, end = first.replace(day=1), next_month(last)
    new = (
        Membership.objects.filter(activated_at__date__gte=start, activated_at__date__lt=end)
        .annotate(month=TruncMonth("activated_at", output_field=DateField()))
        .values("month", "membership_type")
        .annotate(n=Count("pk"))
    )
    renewed = (
        MembershipSale.objects.filter(
            kind=MembershipSaleKind.RENEWAL,
            cancelled_at__isnull=True,
            order__confirmed_at__date__gte=start,
            order__confirmed_at__date__lt=end,
        )
        .annotate(month=TruncMonth("order__confirmed_at", output_field=DateField()))
        .values("month", "membership__membership_type")
        .annotate(n=Count("pk"))
    )
    lapsed = (
        Membership.objects.filter(
            status__in=[MembershipStatus.ACTIVE, MembershipStatus.EXPIRED],
            valid_until__gte=start,
            valid_until__lt=min(end, today),
        )
        .annotate(month=TruncMonth("valid_until"))
        .values("month", "membership_type")
        .annotate(n=Count("pk"))
    )
    types = {kind.pk: kind for kind in MembershipType.objects.all()}
    lines: dict[tuple[date, int], MonthLine] = {}

    def line(month, type_id) -> MonthLine:
        key = (month, type_id)
        if key not in lines:
            lines[key] = MonthLine(month=month, membership_type=types[type_id])
        return lines[key]

    for row in new:
        line(row["month"], row["membership_type"]).new = row["n"]
    for row in renewed:
        line(row["month"], row["membership__membership_type"]).renewed = row["n"]
    for row in lapsed:
        line(row["month"], row["membership_type"]).lapsed = row["n"]
    return sorted(
        lines.values(), key=lambda x: (x.month, x.membership_type.ordering, x.membership_type.code)
    )


@dataclass
class VisitDay:
    """Members' visits on a day: reservations on a timed day (orders, their places, those
    checked in) and walk-ins on an untimed one (card scans, the people they let in)."""

    date: date
    reservations: int = 0
    places: int = 0
    checked_in: int = 0
    walk_ins: int = 0
    walked_in: int = 0

    @property
    def people(self) -> int:
        return self.places + self.walked_in


def member_visits(*, first: date, last: date) -> list[VisitDay]:
    """The days from `first` to `last` with member visits: member places of confirmed orders
    still valid, and member entries at the door."""
    reserved = (
        Ticket.objects.filter(
            member=True,
            cancelled_at__isnull=True,
            order__status=OrderStatus.CONFIRMED,
            date__gte=first,
            date__lte=last,
        )
        .values("date")
        .annotate(
            reservations=Count("order", distinct=True),
            places=Count("pk"),
            checked_in=Count("pk", filter=Q(checked_in_at__isnull=False)),
        )
    )
    walked = (
        MemberEntry.objects.filter(date__gte=first, date__lte=last)
        .values("date")
        .annotate(walk_ins=Count("pk"), walked_in=Sum("people"))
    )
    days: dict[date, VisitDay] = {}
    for row in [*reserved, *walked]:
        day = days.setdefault(row["date"], VisitDay(date=row["date"]))
        for name, value in row.items():
            setattr(day, name, value)
    return sorted(days.values(), key=lambda day: day.date)


@dataclass(frozen=True)
class UnredeemedGift:
    card_code: str
    type_name: str
    buyer: str
    email: str
    bought_on: date
    age_days: int
    price: Decimal


def unredeemed_gifts(*, today: date | None = None) -> list[UnredeemedGift]:
    """Gift memberships paid for (their order confirmed, the sale not cancelled) and not redeemed
    yet, oldest first: the buyer to remind. Named by the card code (the gift code would redeem
    it, so it stays out of reports and their files)."""
    today = today or timezone.localdate()
    sales = (
        MembershipSale.objects.filter(
            kind=MembershipSaleKind.GIFT,
            cancelled_at__isnull=True,
            order__status=OrderStatus.CONFIRMED,
            membership__redeemed_at__isnull=True,
        )
        .exclude(membership__status=MembershipStatus.CANCELLED)
        .select_related("order", "membership__membership_type", "membership__buyer")
        .order_by("order__confirmed_at", "pk")
    )
    gifts = []
    for sale in sales:
        bought_on = timezone.localdate(sale.order.confirmed_at or sale.order.created_at)
        gifts.append(
            UnredeemedGift(
                card_code=sale.membership.card_code,
                type_name=sale.membership.membership_type.name,
                buyer=sale.membership.buyer.get_username(),
                email=sale.order.email,
                bought_on=bought_on,
                age_days=(today - bought_on).days,
                price=sale.price,
            )
        )
    return gifts


class ActiveMembersCollector:
    """`museum_active_members` per type, read at each scrape of /metrics (OrdersConfig)."""

    def collect(self):
        gauge = GaugeMetricFamily(
            "museum_active_members", "Memberships valid today, per type", labels=["type"]
        )
        for line in active_members(day=timezone.localdate()):
            gauge.add_metric([line.membership_type.code], line.members)
        yield gauge
