"""Groups' reports, in aggregate queries: per group visit of a date range, how many it booked
and how many came (or a no-show), what it brought (its order's total less what went back), what
it paid and what is still due; and the groups that still owe, which leave out no-shows (their
revenue stays, but nobody chases a group that did not come: the museum writes to it itself)."""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import F, Q, QuerySet, Sum
from django.db.models.functions import Greatest

from groups.models import GroupRequest, GroupStatus
from museum.money import ZERO
from orders.models import OrderStatus


@dataclass(frozen=True)
class GroupVisitLine:
    """One group's visit in the arrivals report."""

    date: date
    code: str
    organisation: str
    booked: int
    arrived: int | None  # None: not recorded (yet)
    no_show: bool
    revenue: Decimal
    paid: Decimal
    due: Decimal


@dataclass(frozen=True)
class ArrivalsReport:
    first: date
    last: date
    lines: list[GroupVisitLine]

    @property
    def totals(self) -> dict:
        lines = self.lines
        return {
            "groups": len(lines),
            "booked": sum(line.booked for line in lines),
            "arrived": sum(line.arrived or 0 for line in lines),
            "no_shows": sum(line.no_show for line in lines),
            # Booked by the groups that came or did not: those whose arrivals are known.
            "booked_known": sum(line.booked for line in lines if line.arrived or line.no_show),
            "revenue": sum((line.revenue for line in lines), ZERO),
            "paid": sum((line.paid for line in lines), ZERO),
            "due": sum((line.due for line in lines), ZERO),
        }


def _visits() -> QuerySet[GroupRequest]:
    """Approved groups whose order stands (not cancelled)."""
    return GroupRequest.objects.filter(status=GroupStatus.APPROVED).exclude(
        order__status=OrderStatus.CANCELLED
    )


def _billed() -> QuerySet[GroupRequest]:
    """The groups whose order bills something: approved ones, and those called off after their
    final-numbers date, whose order, cancelled, still costs what it did
    (groups.services.numbers.cancel_group)."""
    return GroupRequest.objects.filter(
        Q(status=GroupStatus.APPROVED)
        | Q(status=GroupStatus.CANCELLED, order__total__gt=F("order__paid_back")),
        order__isnull=False,
    )


def _due() -> Greatest:
    return Greatest(F("order__total") - F("order__paid") + F("order__paid_back"), ZERO)


def arrivals_report(*, first: date, last: date) -> ArrivalsReport:
    """The group visits from `first` to `last` that bill something (_billed), by date: booked
    (its headcount), arrived, no-show, revenue (its order's total less what was paid back),
    paid (less paid back) and due; one query."""
    rows = (
        _billed()
        .filter(date__gte=first, date__lte=last)
        .values("pk", "date", "entry_time", "code", "organisation", "arrived", "no_show")
        .annotate(
            booked=Sum("lines__quantity", default=0),
            revenue=F("order__total") - F("order__paid_back"),
            paid=F("order__paid") - F("order__paid_back"),
            due=_due(),
        )
        .order_by("date", F("entry_time").asc(nulls_first=True), "organisation", "pk")
    )
    lines = [
        GroupVisitLine(
            date=row["date"],
            code=row["code"],
            organisation=row["organisation"],
            booked=row["booked"],
            arrived=row["arrived"],
            no_show=row["no_show"],
            revenue=row["revenue"],
            paid=row["paid"],
            due=row["due"],
        )
        for row in rows
    ]
    return ArrivalsReport(first=first, last=last, lines=lines)


def owing() -> QuerySet[GroupRequest]:
    """The groups that still owe part of their invoice (`owed` on each): those billed (_billed),
    but not those marked as a no-show; by the date of their visit."""
    return (
        _billed()
        .filter(no_show=False)
        .annotate(owed=_due())
        .filter(owed__gt=0)
        .select_related("order")
        .order_by("date", "entry_time", "pk")
    )


def visits_from(day: date) -> QuerySet[GroupRequest]:
    """The group visits from `day` on (today's and the upcoming), each with what it booked
    (`booked`) and still owes (`owed`), its order loaded: the desk's list."""
    return (
        _visits()
        .filter(date__gte=day)
        .annotate(booked=Sum("lines__quantity", default=0), owed=_due())
        .select_related("order")
        .order_by("date", F("entry_time").asc(nulls_first=True), "pk")
    )


def waiting() -> QuerySet[GroupRequest]:
    """Requests waiting for an answer (requested, or another time offered), oldest first, with
    what each booked: the desk's queue."""
    return (
        GroupRequest.objects.filter(Q(status=GroupStatus.REQUESTED) | Q(status=GroupStatus.OFFERED))
        .annotate(booked=Sum("lines__quantity", default=0))
        .select_related("tour")
        .order_by("created_at", "pk")
    )
