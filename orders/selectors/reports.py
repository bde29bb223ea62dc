"""The accountant's reads: sales per visit date and category, takings per payment method, and
the partners' on-account statement."""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Sum

from orders.models import (
    MembershipSale,
    Payment,
    Refund,
    Ticket,
)


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
    # After each day's visits, the memberships sold for periods starting that day.
    rows = sorted([*rows, *_membership_sales(first=first, last=last)], key=lambda row: row["date"])
    for row in rows:
        row["net"] = row["gross"] - row["refunds"]
    return SalesReport(
        rows=rows,
        totals=_totals(rows, counts=("sold", "cancelled")),
        takings=(takings := _takings(first=first, last=last)),
        takings_totals=_totals(takings, counts=("payments",)),
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
