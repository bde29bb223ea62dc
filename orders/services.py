"""The rules of orders: prices by visitor category, all-or-nothing places, holds, cancellation.

Places are counted on the rows that hold the limits (an entry slot, a museum day, an event date)
and taken with conditional UPDATEs (`sold + n <= capacity`), so PostgreSQL's row lock queues
parallel buyers and re-checks the condition: a slot is never oversold. Every write that touches
several counted rows takes them in one order (the event row, then the slot, then the day or the
event date; an existing order's row and its tickets before any of them), so two transactions
never wait on each other in a circle.
"""

import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from rest_framework import serializers
from rest_framework.exceptions import NotFound, PermissionDenied

from events.models import EventDate, SpecialEvent
from hours.models import EntrySlot, MuseumDay
from museum.response_cache import group_changed
from orders.exceptions import HoldExpired, OrderCancelled, SoldOutOn, TooLate
from orders.models import Order, OrderStatus, Refund, VisitorCategory
from orders.selectors import may_view_order, tickets_of
from tickets.exceptions import DateInPast, EventNotOnDate, MuseumClosed, SoldOut, UnknownEvent
from tickets.models import Ticket, TicketImage, TicketType
from tickets.services import (
    ANONYMISED_EMAIL,
    CODE_ALPHABET,
    new_confirmation_code,
    past_retention,
)
from tickets.tasks import queue_confirmation

CANCEL_ANY_ORDER = "orders.cancel_any_order"
# The contract's POST /tickets sells this category.
DEFAULT_CATEGORY = "adult"
CENT = Decimal("0.01")


@dataclass(frozen=True)
class Purchase:
    """Who buys, and for which kind of visit and day: what every ticket of a sale shares."""

    buyer: Any
    email: str
    phone: str
    ticket_type: str
    ticket_date: date


@dataclass(frozen=True)
class Taken:
    """The rows a sale counted its places on: its slot, or its event and the event date's row
    (by key); none of them for untimed general entry, counted on the day (its key, the date)."""

    slot: EntrySlot | None = None
    event: SpecialEvent | None = None
    event_date_id: int | None = None


@dataclass(frozen=True)
class Line:
    """`quantity` tickets of one visitor category, at `price` each."""

    category: VisitorCategory | None
    quantity: int
    price: Decimal


def new_order_code() -> str:
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(11))
    return f"order-{chars[:6]}-{chars[6:]}"


def active_categories() -> QuerySet[VisitorCategory]:
    return VisitorCategory.objects.filter(active=True)


def category_price(*, category: VisitorCategory, event: SpecialEvent | None) -> Decimal:
    """What a visitor of `category` pays: the general price, or their share of the event's."""
    if event is None:
        return category.general_price
    share = event.price * category.event_price_percent / 100
    return share.quantize(CENT, rounding=ROUND_HALF_UP)


def _invalid(field: str, message: str) -> serializers.ValidationError:
    return serializers.ValidationError({field: [message]})


def _categories_of(lines: Sequence[dict]) -> list[VisitorCategory]:
    """Each line's category, on sale; a 400 naming the first line whose is not."""
    codes = [line["category"] for line in lines]
    on_sale = {c.category: c for c in active_categories().filter(category__in=codes)}
    for index, code in enumerate(codes):
        if code not in on_sale:
            raise _invalid(f"lines.{index}.category", "No such visitor category on sale.")
    return [on_sale[code] for code in codes]


def _priced(
    *, lines: Sequence[dict], categories: list[VisitorCategory], event: SpecialEvent | None
) -> list[Line]:
    return [
        Line(
            category=category,
            quantity=line["quantity"],
            price=category_price(category=category, event=event),
        )
        for line, category in zip(lines, categories, strict=True)
    ]


def _slot_for(*, ticket_date: date, entry_time: time | None) -> EntrySlot | None:
    """The slot an order names; on a timed day one must be named, on an untimed day none."""
    slots = EntrySlot.objects.filter(day_id=ticket_date)
    if entry_time is None:
        if slots.exists():
            raise _invalid("entryTime", "The museum sells timed entry on that day: name a slot.")
        return None
    slot = slots.filter(entry_time=entry_time).first()
    if slot is None:
        raise _invalid("entryTime", "There is no entry slot at that time on that day.")
    return slot


def place_order(
    *,
    buyer,
    email: str,
    ticket_type: str,
    ticket_date: date,
    lines: Sequence[dict],
    phone: str = "",
    event_id: uuid.UUID | None = None,
    entry_time: time | None = None,
    hold: bool = False,
) -> Order:
    """Sell the order's tickets, all or none; prices come from the visitor categories."""
    count = sum(line["quantity"] for line in lines)
    if count > settings.MUSEUM_MAX_TICKETS_PER_ORDER:
        raise _invalid(
            "lines", f"At most {settings.MUSEUM_MAX_TICKETS_PER_ORDER} tickets per order."
        )
    if ticket_date < timezone.localdate():
        raise DateInPast()
    # Refused before any row is locked.
    categories = _categories_of(lines)
    slot = None
    if ticket_type == TicketType.GENERAL:
        slot = _slot_for(ticket_date=ticket_date, entry_time=entry_time)
    purchase = Purchase(buyer, email, phone, ticket_type, ticket_date)

    def sell() -> Order:
        taken = _take_places(purchase, event_id=event_id, slot=slot, n=count)
        priced = _priced(lines=lines, categories=categories, event=taken.event)
        return _record_order(purchase, taken, priced, hold=hold)

    return _selling(sell, ticket_date=ticket_date, event_id=event_id, slot=slot)


def sell_single_ticket(
    *,
    buyer,
    email: str,
    ticket_type: str,
    ticket_date: date,
    phone: str = "",
    event_id: uuid.UUID | None = None,
) -> Order:
    """The contract's purchase: an order of one ticket of the default category.

    Its price is the contract's (MUSEUM_GENERAL_ADMISSION_PRICE, or the event's price), as
    before categories existed. On a timed day it takes the earliest slot with room.
    """
    if ticket_date < timezone.localdate():
        raise DateInPast()
    category = VisitorCategory.objects.filter(category=DEFAULT_CATEGORY).first()
    purchase = Purchase(buyer, email, phone, ticket_type, ticket_date)

    def sell() -> Order:
        if ticket_type == TicketType.GENERAL:
            taken = Taken(slot=_take_earliest_slot(ticket_date=ticket_date))
        else:
            taken = _take_places(purchase, event_id=event_id, slot=None, n=1)
        price = taken.event.price if taken.event else settings.MUSEUM_GENERAL_ADMISSION_PRICE
        line = Line(category=category, quantity=1, price=price)
        return _record_order(purchase, taken, [line], hold=False, mail="ticket")

    # On a timed day, holds that ran out anywhere on the day may free a place.
    return _selling(sell, ticket_date=ticket_date, event_id=event_id, slot=None)


def _selling(
    sell: Callable[[], Order],
    *,
    ticket_date: date,
    event_id: uuid.UUID | None,
    slot: EntrySlot | None,
) -> Order:
    """Run the sale `sell` in one transaction. Sold out, it gives back the places of holds that
    ran out on the sale's rows and, if there were any, runs once more: expired holds never block
    a buyer, whether or not a task worker released them yet."""
    try:
        with transaction.atomic():
            return sell()
    except SoldOut:
        if not release_expired_holds(ticket_date=ticket_date, event_id=event_id, slot=slot):
            raise
    with transaction.atomic():
        return sell()


def _take_earliest_slot(*, ticket_date: date) -> EntrySlot | None:
    """The earliest slot of a timed day with a place left, its place taken; None if untimed."""
    slots = list(EntrySlot.objects.filter(day_id=ticket_date).order_by("entry_time"))
    if not slots:
        _count_places(ticket_date=ticket_date, event=None, slot=None, n=1)
        return None
    # Read without a lock: the conditional UPDATE decides, and a slot taken meanwhile is skipped.
    for slot in slots:
        if slot.capacity is not None and slot.sold >= slot.capacity:
            continue
        try:
            _count_places(ticket_date=ticket_date, event=None, slot=slot, n=1)
        except SoldOutOn as sold_out:
            if sold_out.scope == "slot":
                continue  # its UPDATE changed nothing: the next one
            raise  # the day is full, whatever the slots say
        return slot
    raise _sold_out(available=0, scope="day")


def _has_room(n: int) -> Q:
    return Q(capacity__isnull=True) | Q(sold__lte=F("capacity") - n)


def _take_places(
    purchase: Purchase, *, event_id: uuid.UUID | None, slot: EntrySlot | None, n: int
) -> Taken:
    """Count n places on the purchase's rows, or raise (the caller's transaction then undoes any
    counted)."""
    event = None
    if purchase.ticket_type == TicketType.EVENT:
        # The event row lock orders a purchase against a PATCH or DELETE of the same event.
        event = SpecialEvent.objects.active().select_for_update().filter(pk=event_id).first()
        if event is None:
            raise UnknownEvent()
    event_date_id = _count_places(ticket_date=purchase.ticket_date, event=event, slot=slot, n=n)
    return Taken(slot=slot, event=event, event_date_id=event_date_id)


def _count_places(
    *, ticket_date: date, event: SpecialEvent | None, slot: EntrySlot | None, n: int
) -> int | None:
    """Count n places on the slot, then the day or the event date; the event date's key."""
    if slot is not None:
        slot_row = EntrySlot.objects.filter(pk=slot.pk)
        if not slot_row.filter(_has_room(n)).update(sold=F("sold") + n):
            raise _sold_out(available=_left(slot_row), scope="slot")
    if event is not None:
        # Under the event's lock no edit adds or removes its dates, so the row found stays.
        dates = EventDate.objects.filter(event=event, date=ticket_date)
        event_date_id = dates.values_list("pk", flat=True).first()
        if event_date_id is None:
            raise EventNotOnDate()
        event_date = EventDate.objects.filter(pk=event_date_id)
        if not event_date.filter(_has_room(n)).update(sold=F("sold") + n):
            raise _sold_out(available=_left(event_date), scope="event_date")
        return event_date_id
    day = MuseumDay.objects.filter(date=ticket_date, is_closed=False)
    if not day.filter(_has_room(n)).update(sold=F("sold") + n):
        if not day.exists():
            raise MuseumClosed()
        raise _sold_out(available=_left(day), scope="day")
    if slot is not None:
        group_changed("slots")
    return None


def _sold_out(*, available: int, scope: str) -> SoldOutOn:
    return SoldOutOn(
        f"Not enough places left: {available} available." if available else None,
        scope=scope,
        available=available,
    )


def _left(row: QuerySet) -> int:
    capacity, sold = row.values_list("capacity", "sold").get()
    return max(capacity - sold, 0)


def _record_order(
    purchase: Purchase, taken: Taken, lines: list[Line], *, hold: bool, mail: str = "order"
) -> Order:
    buyer, email, phone = purchase.buyer, purchase.email, purchase.phone
    ticket_type, ticket_date = purchase.ticket_type, purchase.ticket_date
    slot, event, event_date_id = taken.slot, taken.event, taken.event_date_id
    now = timezone.now()
    order = Order(
        buyer=buyer,
        email=email,
        phone=phone,
        status=OrderStatus.HELD if hold else OrderStatus.CONFIRMED,
        hold_expires_at=now + timedelta(minutes=settings.MUSEUM_HOLD_MINUTES) if hold else None,
        confirmed_at=None if hold else now,
        confirmation_code=new_order_code(),
        ticket_type=ticket_type,
        date=ticket_date,
        event=event,
        slot=slot,
        total=sum((line.price * line.quantity for line in lines), Decimal("0")),
    )
    if mail == "order" and not hold:
        mail_confirmation(order=order)
    order.save(force_insert=True)
    tickets = [
        Ticket(
            buyer=buyer,
            ticket_type=ticket_type,
            date=ticket_date,
            event=event,
            email=email,
            phone=phone,
            price=line.price,
            confirmation_code=new_confirmation_code(ticket_type),
            order=order,
            category=line.category,
            slot=slot,
            # The row that counts the ticket (a museum day's key is its date).
            museum_day_id=None if event else ticket_date,
            event_date_id=event_date_id,
        )
        for line in lines
        for _ in range(line.quantity)
    ]
    order.sold_tickets = Ticket.objects.bulk_create(tickets)
    if mail == "ticket":  # the contract's purchase: its ticket's own email, as it always had
        queue_confirmation(ticket=order.sold_tickets[0])
    return order


def mail_confirmation(*, order: Order) -> None:
    """Enqueue the order's one confirmation email, in the caller's transaction; the order keeps
    the attempt's id, for the caller to save."""
    # Imported here: the task module runs this module's services.
    from orders.tasks import send_order_confirmation_email

    order.confirmation_task_id = send_order_confirmation_email.enqueue(order_id=str(order.pk)).id


# Who changes an order.


def _order_to_change(*, order_id: uuid.UUID, by) -> Order:
    """The order's row, locked, with its slot, if `by` may change it; 404 for those who may not
    see it."""
    order = (
        Order.objects.select_related("slot")
        .select_for_update(of=("self",))
        .filter(pk=order_id)
        .first()
    )
    if order is None or not may_view_order(viewer=by, order=order):
        raise NotFound()
    if by.pk != order.buyer_id and not by.has_perm(CANCEL_ANY_ORDER):
        raise PermissionDenied("Only the buyer or staff may change an order.")
    return order


# Holds.


def confirm_order(*, order_id: uuid.UUID, by) -> Order:
    """Turn a held order into a confirmed one while its hold lasts; its email goes then."""
    with transaction.atomic():
        order = _order_to_change(order_id=order_id, by=by)
        now = timezone.now()
        ran_out = order.status == OrderStatus.HELD and (order.hold_expires_at or now) <= now
        if ran_out:
            _release_hold(order=order, now=now)  # kept: the refusal below comes after the commit
        elif order.status == OrderStatus.EXPIRED:
            raise HoldExpired()
        elif order.status == OrderStatus.CANCELLED:
            raise OrderCancelled()
        elif order.status == OrderStatus.HELD:
            order.status, order.hold_expires_at = OrderStatus.CONFIRMED, None
            order.confirmed_at = now
            mail_confirmation(order=order)
            order.save(
                update_fields=["status", "hold_expires_at", "confirmed_at", "confirmation_task_id"]
            )
        # A confirmed order is left as it is: a retried confirmation.
    if ran_out:
        raise HoldExpired()
    order.sold_tickets = list(tickets_of(order))
    return order


def release_expired_holds(
    *,
    ticket_date: date | None = None,
    event_id: uuid.UUID | None = None,
    slot: EntrySlot | None = None,
    limit: int = 500,
) -> int:
    """Give back the places of holds that ran out (those on the given rows, or all); how many."""
    now = timezone.now()
    due = Order.objects.filter(status=OrderStatus.HELD, hold_expires_at__lte=now)
    if ticket_date is not None:
        due = due.filter(date=ticket_date, event_id=event_id)
    if slot is not None:
        due = due.filter(slot=slot)
    released = 0
    for order_id in due.order_by("hold_expires_at").values_list("pk", flat=True)[:limit]:
        with transaction.atomic():
            # Claim once: a confirmation or another release may have got there first.
            order = (
                Order.objects.select_for_update()
                .filter(pk=order_id, status=OrderStatus.HELD, hold_expires_at__lte=now)
                .first()
            )
            if order is not None:
                _release_hold(order=order, now=now)
                released += 1
    return released


def _release_hold(*, order: Order, now: datetime) -> None:
    order.status = OrderStatus.EXPIRED
    order.cancelled_at = now
    order.save(update_fields=["status", "cancelled_at"])
    voided = Ticket.objects.filter(order=order, cancelled_at__isnull=True).update(cancelled_at=now)
    _give_back(order=order, n=voided)


def _give_back(*, order: Order, n: int) -> None:
    """Uncount n places on the order's rows, in the order they were taken."""
    if n == 0:
        return
    if order.slot_id is not None:
        EntrySlot.objects.filter(pk=order.slot_id).update(sold=F("sold") - n)
        group_changed("slots")
    if order.event_id is not None:
        EventDate.objects.filter(event_id=order.event_id, date=order.date).update(
            sold=F("sold") - n
        )
    else:
        MuseumDay.objects.filter(date=order.date).update(sold=F("sold") - n)


# Cancellation.


def visit_starts_at(*, order: Order) -> datetime:
    """When the visit begins: the slot's entry time, else the start of the ticket's day."""
    starts = order.slot.entry_time if order.slot else time.min
    return timezone.make_aware(datetime.combine(order.date, starts))


def cancel_deadline(*, order: Order) -> datetime:
    return visit_starts_at(order=order) - timedelta(hours=settings.MUSEUM_CANCEL_HOURS_BEFORE)


@transaction.atomic
def cancel_order(*, order_id: uuid.UUID, by, ticket_id: uuid.UUID | None = None) -> Order:
    """Cancel the order, or one of its tickets: places freed at once, refunds recorded."""
    order = _order_to_change(order_id=order_id, by=by)
    if order.status in (OrderStatus.CANCELLED, OrderStatus.EXPIRED):
        raise OrderCancelled()
    now, deadline = timezone.now(), cancel_deadline(order=order)
    if now > deadline and not by.has_perm(CANCEL_ANY_ORDER):
        raise TooLate(deadline=deadline.isoformat())
    # All of them, locked: the answer shows them, and they tell whether any stays valid.
    tickets = list(tickets_of(order).select_for_update(of=("self",)))
    if ticket_id is not None and all(ticket.pk != ticket_id for ticket in tickets):
        raise NotFound()
    voided = [
        ticket
        for ticket in tickets
        if ticket.cancelled_at is None and ticket_id in (None, ticket.pk)
    ]
    if not voided:
        raise OrderCancelled()
    voided_ids = [ticket.pk for ticket in voided]
    Ticket.objects.filter(pk__in=voided_ids).update(cancelled_at=now)
    for ticket in voided:
        ticket.cancelled_at = now
    # Redrawn on the next fetch, stamped CANCELLED. Only their keys are read for the deletion
    # (its signal forgets the cached copies), not the pictures.
    TicketImage.objects.filter(ticket_id__in=voided_ids).only("pk").delete()
    if order.status == OrderStatus.CONFIRMED:  # a held order was never paid
        refunds = Refund.objects.bulk_create(
            Refund(order=order, ticket=ticket, amount=ticket.price, cancelled_by=by)
            for ticket in voided
        )
        for refund in refunds:
            refund.ticket.refund = refund
    _give_back(order=order, n=len(voided))
    if all(ticket.cancelled_at is not None for ticket in tickets):
        order.status, order.cancelled_at = OrderStatus.CANCELLED, now
        order.save(update_fields=["status", "cancelled_at"])
    order.sold_tickets = tickets
    return order


def close_orders_of_cancelled_event(*, event: SpecialEvent) -> int:
    """The event is called off: its orders are cancelled, and what was paid for the tickets
    still valid is due back; how many orders. Called under the event's lock, before its
    tickets are voided (tickets.services.cancel_tickets)."""
    orders = list(
        Order.objects.select_for_update()
        .filter(event=event, status__in=[OrderStatus.CONFIRMED, OrderStatus.HELD])
        .order_by("pk")
    )
    live = Ticket.objects.filter(order__in=orders, cancelled_at__isnull=True)
    paid = [order.pk for order in orders if order.status == OrderStatus.CONFIRMED]
    Refund.objects.bulk_create(
        Refund(order_id=order_id, ticket_id=ticket_id, amount=price, cancelled_by=None)
        for order_id, ticket_id, price in live.filter(order__in=paid).values_list(
            "order_id", "pk", "price"
        )
    )
    return Order.objects.filter(pk__in=[order.pk for order in orders]).update(
        status=OrderStatus.CANCELLED, cancelled_at=timezone.now()
    )


# Personal data.


def anonymise_old_orders(*, batch_size: int = 1000) -> int:
    """Replace the buyer's email and phone on orders past the retention period, as their tickets'
    (tickets.services.anonymise_old_tickets); how many. The order, its tickets and refunds stay."""
    due = past_retention(Order.objects.all())
    anonymised = 0
    # A batch a statement, so each UPDATE stays short however many orders are due.
    while batch := list(due[:batch_size]):
        anonymised += Order.objects.filter(pk__in=batch).update(email=ANONYMISED_EMAIL, phone="")
    return anonymised
