"""The accountant's reads: sales per visit date and category, takings per payment method, sales
by tax rate per day or month, and the partners' on-account statement."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Literal

from django.db.models import (
    Case,
    Count,
    DateField,
    DecimalField,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Trunc
from django.utils import timezone

from museum.money import ZERO
from orders.models import (
    Donation,
    MembershipSale,
    Payment,
    Refund,
    Ticket,
)
from orders.services.taxes import split_gross


@dataclass(frozen=True)
class OnAccountLine:
    """What one sales partner owes for a month: orders paid on account, less credits."""

    partner: str
    orders: int
    sold: Decimal
    credited: Decimal

    @property
    def due(self) -> Decimal:
        return self.sold - self.credited


def on_account_statement(*, month: date) -> list[OnAccountLine]:
    """Per sales partner, the month's orders paid on account (by when they were confirmed) and
    the refunds credited that month (by when the ticket was cancelled), for invoicing."""
    first = month.replace(day=1)
    after = (first + timedelta(days=32)).replace(day=1)
    sold = (
        Payment.objects.filter(
            provider="on_account",
            confirmed_at__date__gte=first,
            confirmed_at__date__lt=after,
        )
        .values("taken_by__username")
        .annotate(orders=Count("pk"), amount=Sum("amount"))
    )
    credited = (
        Refund.objects.filter(
            payment__provider="on_account", created_at__date__gte=first, created_at__date__lt=after
        )
        .values("payment__taken_by__username")
        .annotate(amount=Sum("amount"))
    )
    lines: dict[str, list] = {}
    for row in sold:
        lines[row["taken_by__username"]] = [row["orders"], row["amount"], Decimal("0")]
    for row in credited:
        line = lines.setdefault(row["payment__taken_by__username"], [0, Decimal("0"), 0])
        line[2] = row["amount"]
    return [
        OnAccountLine(partner, orders, sold_amount, credit)
        for partner, (orders, sold_amount, credit) in sorted(lines.items())
    ]


@dataclass(frozen=True)
class SalesReport:
    """Sales per visit date, kind of visit and category, and the takings per payment method, for
    an accountant: each amount gross, less refunds, net; each table with its totals."""

    rows: list[dict]
    totals: dict
    takings: list[dict]
    takings_totals: dict
    # Per voucher tag, the tickets sold with a voucher and still valid, and what it took off
    # their prices (the sales' gross is after it): `tag`, `tickets`, `discount`.
    discounts: list[dict] = field(default_factory=list)
    discounts_total: dict = field(default_factory=dict)


# Each row's and total's amounts (the counts are `sold` and `cancelled`).
AMOUNTS = ("gross", "refunds", "net")


def sales_report(*, first: date, last: date) -> SalesReport:
    """For visits from `first` to `last`, the tickets sold: those of orders that were confirmed
    (paid, sold on account or free), still valid or cancelled since (a ticket cancelled while
    its order was held was never sold; a hold never paid is no sale). Per day, visit and
    category: tickets sold, their price (gross), those cancelled, what went back for them
    (refunds, recorded whether paid out yet or not) and net. Memberships are sold on the same
    terms, each day's after its visits (_membership_sales).

    The takings are the payments that confirmed those orders, per method, with the refunds made
    through each: their net totals equal the sales' (a payment for tickets cancelled while its
    order was held shows that much more in gross and in refunds)."""
    refunded = Refund.objects.filter(ticket=OuterRef("pk"))
    sold = Ticket.objects.filter(
        Q(cancelled_at__isnull=True) | Exists(refunded),
        date__gte=first,
        date__lte=last,
        order__confirmed_at__isnull=False,
    )
    key = ("date", "event__name", "category__name")
    rows = list(
        sold.values(*key)
        .annotate(
            sold=Count("pk"),
            cancelled=Count("pk", filter=Q(cancelled_at__isnull=False)),
            gross=Sum("price", default=Decimal("0")),
        )
        # General entry (no event) first, on every database.
        .order_by(
            "date", F("event__name").asc(nulls_first=True), "category__ordering", "category__name"
        )
    )
    # A line paid by two payments has a refund through each: summed apart from the lines.
    refunds = _refunds_by(Refund.objects.filter(ticket__in=sold), "ticket__", key)
    for row in rows:
        row["what"] = row["event__name"] or "General entry"
        row["refunds"] = refunds.get(tuple(row[name] for name in key), Decimal("0"))
    # After each day's visits, the memberships sold for periods starting that day, then the
    # donations given that day.
    rows = sorted(
        [*rows, *_membership_sales(first=first, last=last), *_donations(first=first, last=last)],
        key=lambda row: row["date"],
    )
    for row in rows:
        row["net"] = row["gross"] - row["refunds"]
    discounts = _discounts_by_tag(sold)
    return SalesReport(
        rows=rows,
        totals=_totals(rows, counts=("sold", "cancelled")),
        takings=(takings := _takings(first=first, last=last)),
        takings_totals=_totals(takings, counts=("payments",)),
        discounts=discounts,
        discounts_total={
            "tickets": sum(row["tickets"] for row in discounts),
            "discount": sum((row["discount"] for row in discounts), Decimal("0")),
        },
    )


def _discounts_by_tag(sold: QuerySet[Ticket]) -> list[dict]:
    """Of the tickets sold, those still valid that a voucher reduced: per voucher tag, how many
    and the discount they got, in one statement."""
    return list(
        sold.filter(cancelled_at__isnull=True, voucher__isnull=False)
        .values(tag=F("voucher__tag"))
        .annotate(tickets=Count("pk"), discount=Sum("discount", default=Decimal("0")))
        .order_by("tag")
    )


def _membership_sales(*, first: date, last: date) -> list[dict]:
    """The membership sales lines of confirmed orders dated (the period's start, a gift's day of
    purchase) from `first` to `last`, as the tickets' rows: per day and type."""
    refunded = Refund.objects.filter(membership_sale=OuterRef("pk"))
    sold = MembershipSale.objects.filter(
        Q(cancelled_at__isnull=True) | Exists(refunded),
        order__date__gte=first,
        order__date__lte=last,
        order__confirmed_at__isnull=False,
    )
    key = ("order__date", "membership__membership_type__name")
    rows = list(
        sold.values(*key)
        .annotate(
            sold=Count("pk"),
            cancelled=Count("pk", filter=Q(cancelled_at__isnull=False)),
            gross=Sum("price", default=Decimal("0")),
        )
        .order_by("order__date", "membership__membership_type__ordering")
    )
    refunds = _refunds_by(Refund.objects.filter(membership_sale__in=sold), "membership_sale__", key)
    for row in rows:
        row["refunds"] = refunds.get(tuple(row[name] for name in key), Decimal("0"))
        row["date"] = row.pop("order__date")
        row["category__name"] = row.pop("membership__membership_type__name")
        row["what"] = "Membership"
    return rows


def _donations(*, first: date, last: date) -> list[dict]:
    """The donations of confirmed orders dated (the day of a donation-only order, a visit's
    date beside tickets) from `first` to `last`, as the tickets' rows: per day and fund; a
    donation staff refunded counts as cancelled, its refunds as the tickets' do."""
    given = Donation.objects.filter(
        order__date__gte=first, order__date__lte=last, order__confirmed_at__isnull=False
    )
    key = ("order__date", "fund__name")
    rows = list(
        given.values(*key)
        .annotate(
            sold=Count("pk"),
            cancelled=Count("pk", filter=Q(cancelled_at__isnull=False)),
            gross=Sum("amount", default=Decimal("0")),
        )
        .order_by("order__date", "fund__ordering", "fund__name")
    )
    refunds = _refunds_by(Refund.objects.filter(donation__in=given), "donation__", key)
    for row in rows:
        row["refunds"] = refunds.get(tuple(row[name] for name in key), Decimal("0"))
        row["date"] = row.pop("order__date")
        row["category__name"] = row.pop("fund__name")
        row["what"] = "Donation"
    return rows


def _refunds_by(refunds: QuerySet[Refund], path: str, key: tuple[str, ...]) -> dict:
    """What `refunds` come to per `key` of their line (reached by `path`), in one statement."""
    rows = refunds.values(*(path + name for name in key)).annotate(amount=Sum("amount"))
    return {tuple(row[path + name] for name in key): row["amount"] for row in rows}


def _takings(*, first: date, last: date) -> list[dict]:
    """Per payment method, the payments that confirmed the orders of visits from `first` to
    `last`, and the refunds made through them; refunds of tickets paid through no payment (sold
    before payments were taken) on a line of their own."""
    paid = Payment.objects.filter(state="confirmed", order__date__gte=first, order__date__lte=last)
    method = ("provider", "info", "taken_by__username")
    rows = {
        tuple(row[name] for name in method): {**row, "refunds": Decimal("0")}
        for row in paid.values(*method).annotate(payments=Count("pk"), gross=Sum("amount"))
    }
    back = Refund.objects.filter(payment__in=paid).values(*(f"payment__{name}" for name in method))
    for row in back.annotate(amount=Sum("amount")):
        key = tuple(row[f"payment__{name}"] for name in method)
        rows[key]["refunds"] = row["amount"]
    unpaid = Refund.objects.filter(
        payment__isnull=True,
        order__date__gte=first,
        order__date__lte=last,
        order__confirmed_at__isnull=False,
    ).aggregate(amount=Sum("amount", default=Decimal("0")))["amount"]
    if unpaid:
        rows[("", "", None)] = {"payments": 0, "gross": Decimal("0"), "refunds": unpaid}
    takings = []
    for (provider, info, partner), row in rows.items():
        row["method"] = _method_name(provider, info, partner)
        row["net"] = row["gross"] - row["refunds"]
        takings.append(row)
    return sorted(takings, key=lambda row: row["method"])


def _method_name(provider: str, info: str, partner: str | None) -> str:
    """A payment method as staff and the accountant name it."""
    if provider == "desk":
        return {"cash": "Cash at the desk", "card": "Card at the desk"}.get(info, "The desk")
    if provider == "on_account":
        return f"On account: {partner}"
    names = {"stripe": "Stripe", "demo": "Demo payments (no money)", "": "No payment (by hand)"}
    return names.get(provider, provider)


def _totals(rows: list[dict], *, counts: tuple[str, ...]) -> dict:
    totals: dict = {name: sum(row[name] for row in rows) for name in counts}
    totals.update({name: sum((row[name] for row in rows), Decimal("0")) for name in AMOUNTS})
    return totals


@dataclass(frozen=True)
class TaxAmounts:
    """Money at one tax rate: `net` + `tax` == `gross`."""

    net: Decimal = ZERO
    tax: Decimal = ZERO
    gross: Decimal = ZERO

    def __add__(self, other: TaxAmounts) -> TaxAmounts:
        return TaxAmounts(self.net + other.net, self.tax + other.tax, self.gross + other.gross)

    def __sub__(self, other: TaxAmounts) -> TaxAmounts:
        return TaxAmounts(self.net - other.net, self.tax - other.tax, self.gross - other.gross)

    @classmethod
    def of(cls, *, gross: Decimal, tax: Decimal) -> TaxAmounts:
        return cls(gross - tax, tax, gross)


@dataclass(frozen=True)
class TaxLine:
    """What was sold and refunded at one rate in one period (`period` is None in the totals
    per rate, and both are None in the report's total)."""

    period: date | None
    rate: Decimal | None
    sold: TaxAmounts = field(default_factory=TaxAmounts)
    refunded: TaxAmounts = field(default_factory=TaxAmounts)

    @property
    def after_refunds(self) -> TaxAmounts:
        return self.sold - self.refunded

    def __add__(self, other: TaxLine) -> TaxLine:
        return TaxLine(
            self.period, self.rate, self.sold + other.sold, self.refunded + other.refunded
        )


Period = Literal["day", "month"]


@dataclass(frozen=True)
class TaxReport:
    """Sales by tax rate per day or month from `first` to `last`: a line per period and rate,
    the totals per rate, and the total."""

    period: Period
    first: date
    last: date
    lines: list[TaxLine]
    by_rate: list[TaxLine]
    total: TaxLine


def tax_report(*, first: date, last: date, period: Period = "day") -> TaxReport:
    """Per day or month (a month's report covers whole months: `first`'s to `last`'s) and tax
    rate, in the museum's zone: the lines sold (tickets and membership sales, net, tax and
    gross as each was sold), dated by when their order was confirmed (paid, sold on account or
    free; as in sales_report, a line cancelled while its order was held was never sold); the
    refunds of lines, dated by when they were recorded (whether paid out yet or not); and what
    is left after refunds. A refund of a whole line takes back the line's kept tax; a refund of
    part of one (its payment had less left) is split at the line's rate by the module's rule
    for an amount tax included (orders.services.taxes.split_gross). Payments paid back whole
    (too late, or twice) and the part of a payment paid back because tickets were cancelled
    while its order was held are no sale and no refund of one: they are not here.

    Summed in the database, in two statements: sold lines and refunds of lines."""
    if period == "month":
        first = first.replace(day=1)
        last = (last.replace(day=1) + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    zone = timezone.get_default_timezone()
    since = datetime.combine(first, time.min, tzinfo=zone)
    until = datetime.combine(last + timedelta(days=1), time.min, tzinfo=zone)
    found = [
        *_sold_by_rate(since=since, until=until, period=period),
        *_refunded_by_rate(since=since, until=until, period=period),
    ]
    lines = _summed(found, key=lambda line: (line.period, line.rate))
    [total] = _summed(lines, key=lambda line: (None, None)) or [TaxLine(None, None)]
    return TaxReport(
        period=period,
        first=first,
        last=last,
        lines=lines,
        by_rate=_summed(lines, key=lambda line: (None, line.rate)),
        total=total,
    )


def _summed(lines: list[TaxLine], *, key: Callable[[TaxLine], tuple]) -> list[TaxLine]:
    """The lines summed per `key` (period and rate, either or both None), in its order."""
    sums: dict[tuple, TaxLine] = {}
    for line in lines:
        period, rate = at = key(line)
        sums[at] = sums.get(at, TaxLine(period, rate)) + line
    return [sums[at] for at in sorted(sums)]


def _period(when: str, *, period: Period) -> Trunc:
    """The day or month (its first day) of the moment `when`, in the museum's zone."""
    return Trunc(when, period, output_field=DateField(), tzinfo=timezone.get_default_timezone())


def _sold_by_rate(*, since: datetime, until: datetime, period: Period) -> list[TaxLine]:
    """What was sold, per period and rate, of tickets and membership sales of orders confirmed from
    `since` until `until`, in one statement (a period and rate may come twice: once a kind of
    line)."""
    parts: list[QuerySet] = []
    for model in (Ticket, MembershipSale):
        line = "ticket" if model is Ticket else "membership_sale"
        refunded = Refund.objects.filter(**{line: OuterRef("pk")})
        sold = model.objects.filter(
            Q(cancelled_at__isnull=True) | Exists(refunded),
            order__confirmed_at__gte=since,
            order__confirmed_at__lt=until,
        )
        parts.append(
            sold.annotate(period=_period("order__confirmed_at", period=period), rate=F("tax_rate"))
            .values("period", "rate")
            .annotate(gross=Sum("price"), taxed=Sum("tax"))
            .order_by()
        )
    # Donations, untaxed: every one of a confirmed order (one is refunded only once paid).
    given = Donation.objects.filter(
        order__confirmed_at__gte=since, order__confirmed_at__lt=until
    ).annotate(period=_period("order__confirmed_at", period=period), rate=Value(ZERO, RATE))
    parts.append(
        given.values("period", "rate")
        .annotate(gross=Sum("amount"), taxed=Value(ZERO, MONEY))
        .order_by()
    )
    rows = parts[0].union(*parts[1:], all=True)
    return [
        TaxLine(
            row["period"], row["rate"], sold=TaxAmounts.of(gross=row["gross"], tax=row["taxed"])
        )
        for row in rows
    ]


MONEY: DecimalField = DecimalField(max_digits=10, decimal_places=2)
RATE: DecimalField = DecimalField(max_digits=4, decimal_places=2)


def _refunded_by_rate(*, since: datetime, until: datetime, period: Period) -> list[TaxLine]:
    """What was refunded, per period and rate, of the refunds of lines recorded from `since` until
    `until`, in one statement: refunds of whole lines summed with the lines' kept tax; those of
    part of a line grouped by amount, each amount split once and counted."""
    refunds = (
        Refund.objects.filter(created_at__gte=since, created_at__lt=until)
        .filter(
            Q(ticket__isnull=False) | Q(membership_sale__isnull=False) | Q(donation__isnull=False)
        )
        .annotate(
            # A donation's: untaxed.
            period=_period("created_at", period=period),
            rate=Coalesce("ticket__tax_rate", "membership_sale__tax_rate", Value(ZERO, RATE)),
            line_price=Coalesce("ticket__price", "membership_sale__price", "donation__amount"),
            line_tax=Coalesce("ticket__tax", "membership_sale__tax", Value(ZERO, MONEY)),
        )
        .annotate(
            # None for a whole line's refund; the amount of a part.
            part=Case(
                When(amount=F("line_price"), then=Value(None)),
                default=F("amount"),
                output_field=MONEY,
            )
        )
        .values("period", "rate", "part")
        .annotate(
            gross=Sum("amount"),
            tax=Sum("line_tax"),
            refunds=Count("pk"),
        )
        .order_by()
    )
    lines = []
    for row in refunds:
        if row["part"] is None:
            tax = row["tax"]
        else:
            tax = split_gross(gross=row["part"], rate=row["rate"]).tax * row["refunds"]
        refunded = TaxAmounts.of(gross=row["gross"], tax=tax)
        lines.append(TaxLine(row["period"], row["rate"], refunded=refunded))
    return lines


@dataclass(frozen=True)
class FundLine:
    """What one fund was given in one month (`month` its first day), and what staff gave back."""

    month: date
    fund: str
    donations: int
    given: Decimal
    refunded: Decimal

    @property
    def net(self) -> Decimal:
        return self.given - self.refunded


@dataclass(frozen=True)
class FundReport:
    first: date
    last: date
    lines: list[FundLine]

    @property
    def totals(self) -> dict:
        return {
            "donations": sum(line.donations for line in self.lines),
            "given": sum((line.given for line in self.lines), ZERO),
            "refunded": sum((line.refunded for line in self.lines), ZERO),
            "net": sum((line.net for line in self.lines), ZERO),
        }


def fund_report(*, first: date, last: date) -> FundReport:
    """Per month (whole months: `first`'s to `last`'s, in the museum's zone) and fund: the
    donations given, dated as the tax report dates a sale (when their order was confirmed:
    paid, on account or free), and the refunds of donations, dated when staff recorded them;
    and what is left, net of refunds. Summed in the database, two statements."""
    first = first.replace(day=1)
    last = (last.replace(day=1) + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    zone = timezone.get_default_timezone()
    since = datetime.combine(first, time.min, tzinfo=zone)
    until = datetime.combine(last + timedelta(days=1), time.min, tzinfo=zone)
    given = (
        Donation.objects.filter(order__confirmed_at__gte=since, order__confirmed_at__lt=until)
        .annotate(month=_period("order__confirmed_at", period="month"))
        .values("month", "fund_id", "fund__name", "fund__ordering")
        .annotate(donations=Count("pk"), amount=Sum("amount"))
        .order_by()
    )
    back = (
        Refund.objects.filter(donation__isnull=False, created_at__gte=since, created_at__lt=until)
        .annotate(month=_period("created_at", period="month"))
        .values("month", "donation__fund_id", "donation__fund__name", "donation__fund__ordering")
        .annotate(amount=Sum("amount"))
        .order_by()
    )
    sums: dict[tuple, list] = {}
    for row in given:
        key = (row["month"], row["fund__ordering"], row["fund__name"], row["fund_id"])
        sums[key] = [row["donations"], row["amount"], ZERO]
    for row in back:
        key = (
            row["month"],
            row["donation__fund__ordering"],
            row["donation__fund__name"],
            row["donation__fund_id"],
        )
        sums.setdefault(key, [0, ZERO, ZERO])[2] = row["amount"]
    lines = [
        FundLine(month, name, count, amount, refunded)
        for (month, _order, name, _pk), (count, amount, refunded) in sorted(sums.items())
    ]
    return FundReport(first=first, last=last, lines=lines)
