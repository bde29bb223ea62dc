"""Reads of orders and memberships: who may see or change one, and the one a viewer asks for or
NotFound."""

import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet, Sum
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django.utils.translation import gettext as _
from prometheus_client.core import GaugeMetricFamily

from events.models import EventDate
from hours.models import EntrySlot, MuseumDay
from hours.services import slots_on_sale
from museum.exceptions import NotAllowed, NotFound
from orders.codes import read_code
from orders.exceptions import NoGiftCard, NoMembershipCard, NotPaid, UnknownMembership
from orders.models import (
    ANONYMISED_EMAIL,
    MemberEntry,
    Membership,
    MembershipSale,
    MembershipSaleKind,
    MembershipStatus,
    Order,
    OrderStatus,
    Payment,
    Refund,
    Ticket,
)

VIEW_ANY_ORDER = "orders.view_order"
CANCEL_ANY_ORDER = "orders.cancel_any_order"


def visit_starts_at(*, order: Order) -> datetime:
    """When the visit begins: the slot's entry time, else the start of the ticket's day."""
    starts = order.slot.entry_time if order.slot else time.min
    return timezone.make_aware(datetime.combine(order.date, starts))


def cancel_deadline(*, order: Order) -> datetime:
    """Until when its buyer may cancel the order (cancel_order; its PDF and email say it). A
    membership's: until its period starts (the order's date), or MUSEUM_MEMBERSHIP_CANCEL_DAYS
    after it was bought, whichever is later."""
    if order.sells_memberships:
        starts = timezone.make_aware(datetime.combine(order.date, time.min))
        cooling_off = order.created_at + timedelta(days=settings.MUSEUM_MEMBERSHIP_CANCEL_DAYS)
        return max(starts, cooling_off)
    return visit_starts_at(order=order) - timedelta(hours=settings.MUSEUM_CANCEL_HOURS_BEFORE)


@dataclass(frozen=True)
class OrderAccount:
    """What an order's visitor paid for, got back and still holds, ticket by ticket: the tickets
    sold (those still valid and those cancelled since the order was confirmed, each with its
    refund), in the order of its lines (the visitor categories' order). A ticket cancelled while
    the order was held was never paid for, and is not in it."""

    valid: list[Ticket]
    cancelled: list[Ticket]

    @property
    def paid(self) -> Decimal:
        return sum((ticket.price for ticket in self.valid + self.cancelled), Decimal("0"))

    @property
    def back(self) -> Decimal:
        return sum((ticket.refund.amount for ticket in self.cancelled), Decimal("0"))

    @property
    def still_valid(self) -> Decimal:
        return sum((ticket.price for ticket in self.valid), Decimal("0"))


def order_account(*, order: Order) -> OrderAccount:
    tickets = sorted(
        order.tickets.select_related("category", "refund", "event", "slot"), key=line_order
    )
    return OrderAccount(
        valid=[ticket for ticket in tickets if ticket.cancelled_at is None],
        # Cancelled since it was confirmed: cancelling a confirmed order's ticket records its
        # refund (orders.services.payments.refund_tickets), a free one's too.
        cancelled=[t for t in tickets if t.cancelled_at is not None and _has_refund(t)],
    )


def line_order(ticket: Ticket) -> tuple:
    """Where a ticket comes among its order's: as the visitor categories are listed (adults
    first), then by its code."""
    category = ticket.category
    kind = (category.ordering, category.category) if category else (float("inf"), "")
    return (kind, ticket.confirmation_code)


def _has_refund(ticket: Ticket) -> bool:
    try:
        return ticket.refund is not None
    except Refund.DoesNotExist:
        return False


def may_view_order(*, viewer, order: Order) -> bool:
    return viewer.pk == order.buyer_id or viewer.has_perm(VIEW_ANY_ORDER)


def tickets_of(order: Order) -> QuerySet[Ticket]:
    """The order's tickets with what its answer shows of each (category, slot), in one
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
    confirmation code; each with its tickets as `sold_tickets` and its refunds, in two queries
    more."""
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
        .prefetch_related(tickets, "refunds")  # type: ignore[no-redef]
        .order_by("-created_at", "-pk")
    )


def tickets_of_orders() -> QuerySet[Ticket]:
    return Ticket.objects.select_related("category", "slot")


def viewable_order(*, order_id: uuid.UUID, viewer) -> Order:
    """The order with its tickets, if `viewer` may see it; else NotFound, as for no order."""
    order = Order.objects.select_related("slot", "event").filter(pk=order_id).first()
    if order is None or not may_view_order(viewer=viewer, order=order):
        raise NotFound()
    order.sold_tickets = list(tickets_of(order))
    return order


def refuse_unless_printable(order: Order) -> None:
    """Whether the order's tickets may be printed, drawn or sent, for every face that does (the
    API's PDF and image, the desk's print and resend, the ticket's page in the admin): not those
    of an order never paid, held or with its hold run out (released yet or not), which would pass
    for paid tickets (NotPaid). A paid order's cancelled tickets are printed stamped CANCELLED.
    A membership's order has no tickets (NotFound): the membership's card admits."""
    if order.sells_memberships:
        raise NotFound(_("A membership's order has no tickets: the membership's card admits."))
    if order.status == OrderStatus.HELD:
        raise NotPaid()
    if order.status == OrderStatus.EXPIRED:
        raise NotPaid(_("The order's hold ran out before it was paid: it has no tickets."))
    if order.confirmed_at is None:
        raise NotPaid(_("The order was cancelled before it was paid: it has no tickets."))


def is_printable(order: Order) -> bool:
    """refuse_unless_printable as a yes or no: whether the order's tickets have images and a PDF
    to link to (its answer's `imageUrl`)."""
    try:
        refuse_unless_printable(order)
    except (NotPaid, NotFound):
        return False
    return True


def printable_order(*, order_id: uuid.UUID, viewer) -> Order:
    """The order whose tickets `viewer` asks to print: NotFound as viewable_order, NotPaid as
    refuse_unless_printable."""
    order = viewable_order(order_id=order_id, viewer=viewer)
    refuse_unless_printable(order)
    return order


@dataclass(frozen=True)
class RunOutHolds:
    """The places of holds that ran out and are not released yet (the job releases them), which
    a read that writes nothing counts as free: (places, of them members') by slot, and places
    by general-entry day and by event date."""

    slots: dict[int, tuple[int, int]]
    days: dict[date, int]
    event_dates: dict[int, int]

    def free_day(self, day: MuseumDay, slots: list[EntrySlot]) -> None:
        """The day and its slots, as they read once these holds are released (not saved)."""
        day.sold -= self.days.get(day.date, 0)
        for slot in slots:
            places, member = self.slots.get(slot.pk, (0, 0))
            slot.sold -= places
            slot.member_sold -= member

    def free_event_date(self, event_date: EventDate) -> None:
        event_date.sold -= self.event_dates.get(event_date.pk, 0)


def run_out_holds(*, first: date, last: date, now: datetime | None = None) -> RunOutHolds:
    """RunOutHolds of the visit dates from `first` to `last`, in one statement."""
    rows = (
        Ticket.objects.filter(
            Order.run_out_unreleased(now or timezone.now(), prefix="order__"),
            date__gte=first,
            date__lte=last,
            cancelled_at__isnull=True,
        )
        .values("slot_id", "museum_day_id", "event_date_id")
        .annotate(places=Count("pk"), member=Count("pk", filter=Q(member=True)))
    )
    # A slot is of one day, so it has one row; a day has a row per slot (and one without).
    slots: dict[int, tuple[int, int]] = {}
    days: Counter[date] = Counter()
    event_dates: Counter[int] = Counter()
    for row in rows:
        if row["slot_id"] is not None:
            slots[row["slot_id"]] = (row["places"], row["member"])
        if row["museum_day_id"] is not None:
            days[row["museum_day_id"]] += row["places"]
        if row["event_date_id"] is not None:
            event_dates[row["event_date_id"]] += row["places"]
    return RunOutHolds(slots, dict(days), dict(event_dates))


# What an order's refunds come to, in the statement that reads the order. By hand: the ORM's
# Subquery(Sum) and Coalesce cost more CPU to build than the statement this saves.
_REFUNDED = RawSQL(
    f'SELECT COALESCE(SUM("amount"), 0) FROM "{Refund._meta.db_table}" '
    f'WHERE "order_id" = "{Order._meta.db_table}"."id"',
    (),
    output_field=Order._meta.get_field("total"),
)


def order_to_change(*, order_id: uuid.UUID, by) -> Order:
    """The order's row, locked, with its slot and what its refunds come to (`refunded`, which
    the refunds a change makes add to: orders.refunds.record_refunds), if `by` may change it;
    NotFound for those who may not see it. Every refund is written under this lock, so its
    answer's refundDue needs no read after the commit."""
    order = (
        Order.objects.select_related("slot", "event")
        .select_for_update(of=("self",))
        .annotate(refunded=_REFUNDED)  # type: ignore[no-redef]  # declared on Order: services set it
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
    """Orders whose code or a ticket's code is `query` (read as the door reads it:
    codes.read_code), or whose buyer's email is, or whose buyer's name contains it; newest
    first, with their tickets."""
    text = query.strip()
    if not text:
        return []
    matches = Q(email__iexact=text) | Q(name__icontains=text)
    code = read_code(text)
    if code is not None:
        if code.order_code is not None:
            matches |= Q(confirmation_code=code.order_code)
        if code.ticket_codes:
            ticket = Ticket.objects.filter(
                order=OuterRef("pk"), confirmation_code__in=code.ticket_codes
            )
            matches |= Q(Exists(ticket))
    tickets = Prefetch("tickets", queryset=tickets_of_orders(), to_attr="sold_tickets")
    orders = (
        Order.objects.filter(matches)
        .select_related("slot", "event")
        .prefetch_related(tickets)  # type: ignore[no-redef]
        .order_by("-created_at", "-pk")
    )
    return list(orders[:limit])


@dataclass(frozen=True)
class Choice:
    """An entry slot (its time) or an event's date (the day) to sell, and its places left."""

    value: str
    left: int | None  # None: unlimited
    over: bool = False  # its sale has ended

    @property
    def open(self) -> bool:
        return not self.over and self.left != 0


@dataclass(frozen=True)
class EntryChoices:
    """What a sale or a move on `day` chooses from: `kind` is "slots" (the day's entry slots),
    "untimed" (an open day without slots: `left` places), "closed" or "event" (the event's
    dates from today on)."""

    kind: str
    choices: list[Choice]
    left: int | None = None

    @property
    def first_open(self) -> str | None:
        return next((choice.value for choice in self.choices if choice.open), None)


def entry_choices(*, day: date, event_id: uuid.UUID | None = None) -> EntryChoices:
    """The slots of `day` with their places left (sold out or past closed), or an event's dates."""
    if event_id is not None:
        dates = EventDate.objects.filter(
            event_id=event_id, date__gte=timezone.localdate()
        ).order_by("date")
        return EntryChoices(
            "event",
            [
                Choice(
                    d.date.isoformat(), None if d.capacity is None else max(d.capacity - d.sold, 0)
                )
                for d in dates
            ],
        )
    museum_day = MuseumDay.objects.filter(date=day, is_closed=False).first()
    if museum_day is None:
        return EntryChoices("closed", [])
    slots = [
        Choice(f"{slot.entry_time:%H:%M}", slot.available, slot.over)
        for slot in slots_on_sale(day=museum_day)
    ]
    if slots:
        return EntryChoices("slots", slots)
    left = None if museum_day.capacity is None else max(museum_day.capacity - museum_day.sold, 0)
    return EntryChoices("untimed", [], left=left)


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
    """Per event, entry slot (every one of the day's, sold or not) and untimed general entry on
    `day`: places sold, held, checked in and still to come, against capacity; one query for the
    tickets and one for the slots."""
    counts = (
        Ticket.objects.filter(date=day, cancelled_at__isnull=True)
        .values("slot__entry_time", "event__name", "event_date__capacity")
        .annotate(
            sold=Count("pk", filter=Q(held=False)),
            held=Count("pk", filter=Q(held=True)),
            checked_in=Count("pk", filter=Q(checked_in_at__isnull=False)),
        )
        .order_by()
    )
    events, slots, untimed = [], {}, []
    for row in counts:
        figures = (row["sold"], row["held"], row["checked_in"])
        if row["event__name"]:
            events.append(Arrivals(row["event__name"], row["event_date__capacity"], *figures))
        elif row["slot__entry_time"] is not None:
            slots[row["slot__entry_time"]] = figures
        else:
            untimed.append(Arrivals("General entry", None, *figures))
    timed = [
        Arrivals(f"{slot.entry_time:%H:%M}", slot.capacity, *slots.get(slot.entry_time, (0, 0, 0)))
        for slot in EntrySlot.objects.filter(day_id=day).order_by("entry_time")
    ]
    return sorted(events, key=lambda row: row.what) + timed + untimed


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
    sold = Ticket.objects.filter(
        Q(cancelled_at__isnull=True) | Q(refund__isnull=False),
        date__gte=first,
        date__lte=last,
        order__confirmed_at__isnull=False,
    )
    rows = list(
        sold.values("date", "event__name", "category__name")
        .annotate(
            sold=Count("pk"),
            cancelled=Count("pk", filter=Q(cancelled_at__isnull=False)),
            gross=Sum("price", default=Decimal("0")),
            refunds=Sum("refund__amount", default=Decimal("0")),
        )
        # General entry (no event) first, on every database.
        .order_by(
            "date", F("event__name").asc(nulls_first=True), "category__ordering", "category__name"
        )
    )
    for row in rows:
        row["what"] = row["event__name"] or "General entry"
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
    sold = MembershipSale.objects.filter(
        Q(cancelled_at__isnull=True) | Q(refund__isnull=False),
        order__date__gte=first,
        order__date__lte=last,
        order__confirmed_at__isnull=False,
    )
    rows = list(
        sold.values("order__date", "membership__membership_type__name")
        .annotate(
            sold=Count("pk"),
            cancelled=Count("pk", filter=Q(cancelled_at__isnull=False)),
            gross=Sum("price", default=Decimal("0")),
            refunds=Sum("refund__amount", default=Decimal("0")),
        )
        .order_by("order__date", "membership__membership_type__ordering")
    )
    for row in rows:
        row["date"] = row.pop("order__date")
        row["category__name"] = row.pop("membership__membership_type__name")
        row["what"] = "Membership"
    return rows


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


# Memberships.

VIEW_ANY_MEMBERSHIP = "orders.view_membership"


def viewable_memberships(
    *,
    viewer,
    status: str | None = None,
    type_code: str | None = None,
    expiring_before: date | None = None,
    search: str | None = None,
) -> QuerySet[Membership]:
    """The viewer's own memberships and the gifts it gave (staff who may view any membership:
    all), newest first; of a `status` as status_on reads it (a lapsed one is expired, not
    active), a type, ending on or before a date, or whose holder's name, email or card code
    contains `search` (only among its own: a gift's giver never learns its holder's)."""
    found = Membership.objects.select_related("membership_type").prefetch_related("sales")
    sees_all = viewer.has_perm(VIEW_ANY_MEMBERSHIP)
    if not sees_all:
        gave = MembershipSale.objects.filter(kind=MembershipSaleKind.GIFT, order__buyer=viewer)
        found = found.filter(Q(buyer=viewer) | Q(pk__in=gave.values("membership_id")))
    today = timezone.localdate()
    lapsed = Q(status=MembershipStatus.ACTIVE, valid_until__lt=today)
    if status == MembershipStatus.EXPIRED:
        found = found.filter(Q(status=MembershipStatus.EXPIRED) | lapsed)
    elif status == MembershipStatus.ACTIVE:
        found = found.filter(status=MembershipStatus.ACTIVE).exclude(lapsed)
    elif status:
        found = found.filter(status=status)
    if type_code:
        found = found.filter(membership_type__code=type_code)
    if expiring_before:
        found = found.filter(valid_until__lte=expiring_before)
    if search:
        text = search.strip()
        holders = (
            Q(holder_name__icontains=text) | Q(email__icontains=text) | Q(card_code__icontains=text)
        )
        found = found.filter(holders if sees_all else holders & Q(buyer=viewer))
    return found.order_by("-created_at", "pk")


def viewable_membership(*, membership_id: uuid.UUID, viewer) -> Membership:
    """A membership for its owner, a gift's giver (whose answer leaves out the holder's data once
    another account redeemed it: may_see_holder) and staff; UnknownMembership (404) for anyone
    else."""
    membership = viewable_memberships(viewer=viewer).filter(pk=membership_id).first()
    if membership is None:
        raise UnknownMembership()
    return membership


def owned_membership(*, membership_id: uuid.UUID, viewer) -> Membership:
    """A membership for its owner and staff, to act on or print its card; UnknownMembership
    (404) for anyone else, a redeemed gift's giver too."""
    membership = viewable_membership(membership_id=membership_id, viewer=viewer)
    if not may_see_holder(viewer=viewer, membership=membership):
        raise UnknownMembership()
    return membership


def may_see_holder(*, viewer, membership: Membership) -> bool:
    """Whether `viewer` sees the holder's data (name, email, card): the membership's owner (its
    buyer, or for a gift the account that redeemed it) and staff. A gift's giver, once another
    account redeemed it, sees that it was redeemed, not by whom."""
    return viewer.pk == membership.buyer_id or viewer.has_perm(VIEW_ANY_MEMBERSHIP)


def may_see_gift_code(*, viewer, membership: Membership) -> bool:
    """A gift's code is shown to its buyer and staff only: whoever has it may redeem it."""
    return membership.gift_code is not None and (
        viewer.pk == membership.buyer_id or viewer.has_perm(VIEW_ANY_MEMBERSHIP)
    )


def refuse_unless_card_printable(membership: Membership) -> None:
    """Whether the membership's card may be printed, drawn or sent, for every face that does (the
    API's PNG and PDF, the desk's print, the activation email): not while it is pending (not
    paid, or a gift not redeemed: no holder yet) nor once cancelled (NoMembershipCard)."""
    if membership.status == MembershipStatus.PENDING:
        if membership.gift_code and not membership.redeemed_at:
            raise NoMembershipCard(
                _("The gift membership is not redeemed yet: its card comes once it is.")
            )
        raise NoMembershipCard()
    if membership.status == MembershipStatus.CANCELLED:
        raise NoMembershipCard(_("The membership was cancelled: it has no card."))


def printable_membership(*, membership_id: uuid.UUID, viewer) -> Membership:
    """The membership whose card `viewer` asks for: NotFound as owned_membership,
    NoMembershipCard as refuse_unless_card_printable."""
    membership = owned_membership(membership_id=membership_id, viewer=viewer)
    refuse_unless_card_printable(membership)
    return membership


def refuse_unless_gift_card_printable(membership: Membership) -> None:
    """Whether the membership's gift card may be printed, drawn or sent, for every face that does
    (the API's PDF, the desk's print, the purchase email): only a gift's (NoGiftCard), once its
    order is paid and while neither it nor the gift is cancelled, and not once redeemed: the code
    it prints is spent then, and the holder's card is what admits."""
    if not membership.gift_code:
        raise NoGiftCard(_("The membership is not a gift: it has no gift card."))
    if membership.redeemed_at is not None:
        raise NoGiftCard(_("The gift membership was redeemed: its gift code is spent."))
    if membership.status == MembershipStatus.CANCELLED:
        raise NoGiftCard(_("The gift membership was cancelled: it has no gift card."))
    paid = membership.sales.filter(
        kind=MembershipSaleKind.GIFT, cancelled_at__isnull=True, order__status=OrderStatus.CONFIRMED
    )
    if not paid.exists():
        raise NoGiftCard()


def gift_card_membership(*, membership_id: uuid.UUID, viewer) -> Membership:
    """The gift whose card `viewer` asks for: NotFound as viewable_membership (its giver still
    sees it once redeemed), NoGiftCard as refuse_unless_gift_card_printable."""
    membership = viewable_membership(membership_id=membership_id, viewer=viewer)
    refuse_unless_gift_card_printable(membership)
    return membership


def find_memberships(*, query: str, limit: int = 30) -> list[Membership]:
    """Memberships whose card code is `query` (read as the door reads it: codes.read_code), or
    whose holder's email is, or whose holder's name contains it; newest first."""
    text = query.strip()
    if not text:
        return []
    matches = Q(email__iexact=text) | Q(holder_name__icontains=text)
    code = read_code(text)
    if code is not None and code.member_code:
        matches |= Q(card_code=code.member_code)
    found = Membership.objects.filter(matches).select_related("membership_type")
    return list(found.order_by("-created_at", "-pk")[:limit])


@dataclass(frozen=True)
class MemberVisit:
    """A member's visit as the desk lists it: a reservation (its order) or a walk-in at the
    door on a day without entry slots."""

    date: date
    people: int
    order: Order | None = None
    entered_at: datetime | None = None


def recent_member_visits(membership: Membership, *, limit: int = 10) -> list[MemberVisit]:
    """The membership's latest visits, reserved or walked in, newest first."""
    orders = (
        Order.objects.filter(membership=membership)
        .select_related("slot")
        .annotate(people=Count("tickets"))
        .order_by("-date", "-created_at")[:limit]
    )
    entries = MemberEntry.objects.filter(membership=membership).order_by("-entered_at")[:limit]
    visits = [MemberVisit(date=order.date, people=order.people, order=order) for order in orders]
    visits += [
        MemberVisit(date=entry.date, people=entry.people, entered_at=entry.entered_at)
        for entry in entries
    ]
    return sorted(visits, key=lambda visit: visit.date, reverse=True)[:limit]
