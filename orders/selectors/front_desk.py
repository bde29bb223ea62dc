"""The desk's reads: orders found by code, email or name, what there is to sell on a day, who
arrives, and the day's takings."""

import uuid
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Count, Exists, OuterRef, Prefetch, Q, Sum
from django.utils import timezone

from events.models import EventDate
from hours.models import EntrySlot, MuseumDay
from hours.services import slots_on_sale
from orders.codes import read_code
from orders.models import (
    Order,
    Payment,
    Refund,
    Ticket,
)
from orders.selectors.access import tickets_of_orders


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
