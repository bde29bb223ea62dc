"""Reads of orders: who may see or change one, and the order a viewer asks for or NotFound."""

import uuid
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet, Sum
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from museum.exceptions import NotAllowed, NotFound
from orders.models import ANONYMISED_EMAIL, Order, OrderStatus, Payment, Refund, Ticket

VIEW_ANY_ORDER = "orders.view_order"
CANCEL_ANY_ORDER = "orders.cancel_any_order"


def visit_starts_at(*, order: Order) -> datetime:
    """When the visit begins: the slot's entry time, else the start of the ticket's day."""
    starts = order.slot.entry_time if order.slot else time.min
    return timezone.make_aware(datetime.combine(order.date, starts))


def cancel_deadline(*, order: Order) -> datetime:
    """Until when its buyer may cancel the order (cancel_order; its PDF and email say it)."""
    return visit_starts_at(order=order) - timedelta(hours=settings.MUSEUM_CANCEL_HOURS_BEFORE)


def may_view_order(*, viewer, order: Order) -> bool:
    return viewer.pk == order.buyer_id or viewer.has_perm(VIEW_ANY_ORDER)


def tickets_of(order: Order) -> QuerySet[Ticket]:
    """The order's tickets with what its answer shows of each (category, slot, refund), in one
    query; the services keep them on the order as `sold_tickets`."""
    return tickets_of_orders().filter(order=order)


def viewable_orders(
    *,
    viewer,
    start: date | None = None,
    end: date | None = None,
    status: str | None = None,
    code: str | None = None,
) -> QuerySet[Order]:
    """The orders `viewer` may see (their own; staff who may view any order: all), newest first,
    for visits from `start` to `end`, of `status`, with `code` as the order's or a ticket's
    confirmation code; each with its tickets as `sold_tickets`, in one query more."""
    orders = Order.objects.all()
    if not viewer.has_perm(VIEW_ANY_ORDER):
        orders = orders.filter(buyer=viewer)
    if start is not None:
        orders = orders.filter(date__gte=start)
    if end is not None:
        orders = orders.filter(date__lte=end)
    if status is not None:
        orders = orders.filter(status=status)
    if code is not None:
        with_ticket = Ticket.objects.filter(order=OuterRef("pk"), confirmation_code=code)
        orders = orders.filter(Q(confirmation_code=code) | Exists(with_ticket))
    # Into the list the services keep on an order (Order.sold_tickets), which stubs see declared.
    tickets = Prefetch(
        "tickets",
        queryset=tickets_of_orders(),
        to_attr="sold_tickets",
    )
    return (
        orders.select_related("slot", "event")
        .prefetch_related(tickets)  # type: ignore[no-redef]
        .order_by("-created_at", "-pk")
    )


def tickets_of_orders() -> QuerySet[Ticket]:
    return Ticket.objects.select_related("category", "slot", "refund")


def viewable_order(*, order_id: uuid.UUID, viewer) -> Order:
    """The order with its tickets, if `viewer` may see it; else NotFound, as for no order."""
    order = Order.objects.select_related("slot", "event").filter(pk=order_id).first()
    if order is None or not may_view_order(viewer=viewer, order=order):
        raise NotFound()
    order.sold_tickets = list(tickets_of(order))
    return order


def order_to_change(*, order_id: uuid.UUID, by) -> Order:
    """The order's row, locked, with its slot, if `by` may change it; NotFound for those who may
    not see it."""
    order = (
        Order.objects.select_related("slot", "event")
        .select_for_update(of=("self",))
        .filter(pk=order_id)
        .first()
    )
    if order is None or not may_view_order(viewer=by, order=order):
        raise NotFound()
    if by.pk != order.buyer_id and not by.has_perm(CANCEL_ANY_ORDER):
        raise NotAllowed("Only the buyer or staff may change an order.")
    return order


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


def find_orders(*, query: str, limit: int = 30) -> list[Order]:
    """Orders whose code or a ticket's code is `query` (any case), or whose buyer's email is, or
    whose buyer's name contains it; newest first, with their tickets."""
    text = query.strip()
    if not text:
        return []
    ticket_code = Ticket.objects.filter(order=OuterRef("pk"), confirmation_code__iexact=text)
    matches = (
        Q(confirmation_code__iexact=text)
        | Exists(ticket_code)
        | Q(email__iexact=text)
        | Q(name__icontains=text)
    )
    tickets = Prefetch("tickets", queryset=tickets_of_orders(), to_attr="sold_tickets")
    orders = (
        Order.objects.filter(matches)
        .select_related("slot", "event")
        .prefetch_related(tickets)  # type: ignore[no-redef]
        .order_by("-created_at", "-pk")
    )
    return list(orders[:limit])


@dataclass(frozen=True)
class Arrivals:
    """A slot's (or an untimed day's, or an event's) places on a day, for the desk."""

    what: str
    capacity: int | None
    sold: int
    held: int
    checked_in: int

    @property
    def to_come(self) -> int:
        return self.sold - self.checked_in


def arrivals_on(day: date) -> list[Arrivals]:
    """Per entry slot (or untimed general entry) and event on `day`: places sold, held, checked
    in and still to come, against capacity; one query for the tickets."""
    counts = (
        Ticket.objects.filter(date=day, cancelled_at__isnull=True)
        .values("slot__entry_time", "slot__capacity", "event__name", "event_date__capacity")
        .annotate(
            sold=Count("pk", filter=Q(held=False)),
            held=Count("pk", filter=Q(held=True)),
            checked_in=Count("pk", filter=Q(checked_in_at__isnull=False)),
        )
        .order_by("event__name", "slot__entry_time")
    )
    rows = []
    for row in counts:
        if row["event__name"]:
            what, capacity = row["event__name"], row["event_date__capacity"]
        elif row["slot__entry_time"] is not None:
            what, capacity = f"{row['slot__entry_time']:%H:%M}", row["slot__capacity"]
        else:
            what, capacity = "General entry", None
        rows.append(Arrivals(what, capacity, row["sold"], row["held"], row["checked_in"]))
    return rows


def takings_on(day: date) -> list[dict]:
    """Money taken on `day` per provider and method (the desk's cash and card), less what was
    paid back that day through the same."""
    paid = (
        Payment.objects.filter(state="confirmed", confirmed_at__date=day)
        .values("provider", "info")
        .annotate(count=Count("pk"), amount=Sum("amount"))
        .order_by("provider", "info")
    )
    refunded = {
        (row["payment__provider"], row["payment__info"]): row["amount"]
        for row in Refund.objects.filter(state="done", done_at__date=day, payment__isnull=False)
        .values("payment__provider", "payment__info")
        .annotate(amount=Sum("amount"))
    }
    return [
        {**row, "refunded": refunded.get((row["provider"], row["info"]), Decimal("0"))}
        for row in paid
    ]


@dataclass(frozen=True)
class SalesReport:
    """Tickets per visit date, kind of visit and category; totals; takings per payment method."""

    rows: list[dict]
    totals: dict
    takings: list[dict]


def sales_report(*, first: date, last: date) -> SalesReport:
    """For visits from `first` to `last`, tickets of orders that were confirmed (paid, sold on
    account or free): sold (still valid), cancelled, what the valid ones took and what went
    back; a hold never paid is no sale and no cancellation. Takings per payment method are the
    payments confirmed for those visits."""
    tickets = Ticket.objects.filter(
        date__gte=first, date__lte=last, order__confirmed_at__isnull=False
    )
    valid, void = Q(cancelled_at__isnull=True), Q(cancelled_at__isnull=False)
    rows = list(
        tickets.values("date", "event__name", "category__name")
        .annotate(
            sold=Count("pk", filter=valid),
            cancelled=Count("pk", filter=void),
            takings=Sum("price", filter=valid, default=Decimal("0")),
            refunded=Sum("refund__amount", filter=void, default=Decimal("0")),
        )
        # General entry (no event) first, on every database.
        .order_by(
            "date", F("event__name").asc(nulls_first=True), "category__ordering", "category__name"
        )
    )
    for row in rows:
        row["what"] = row["event__name"] or "General entry"
    totals = {
        name: sum((row[name] for row in rows), start)
        for name, start in (
            ("sold", 0),
            ("cancelled", 0),
            ("takings", Decimal("0")),
            ("refunded", Decimal("0")),
        )
    }
    takings = list(
        Payment.objects.filter(state="confirmed", order__date__gte=first, order__date__lte=last)
        .values("provider", "info")
        .annotate(count=Count("pk"), amount=Sum("amount"))
        .order_by("provider", "info")
    )
    return SalesReport(rows=rows, totals=totals, takings=takings)


def emails_waiting() -> int:
    """Confirmed orders whose confirmation email has not gone yet (waiting, or being retried)."""
    return (
        Order.objects.filter(status=OrderStatus.CONFIRMED, confirmation_sent_at__isnull=True)
        .exclude(email=ANONYMISED_EMAIL)
        .count()
    )


class EmailsWaitingCollector:
    """`museum_emails_waiting`, read at each scrape of /metrics (registered in OrdersConfig)."""

    def collect(self):
        yield GaugeMetricFamily(
            "museum_emails_waiting",
            "Confirmed orders whose email has not gone yet",
            value=emails_waiting(),
        )
