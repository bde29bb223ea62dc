"""A sale's places: counted on its rows (hours.locking, the one lock order) or refused, and given
back when its tickets are cancelled or its hold runs out.

A sale locks the event's row first (it orders a sale against an edit or the calling off of the
same event), then counts on the slot, then the day or the event date. An existing order's row
and its tickets are locked before any of them.
"""

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, time

from django.db.models import QuerySet, Value
from django.utils import timezone
from django.utils.translation import gettext as _

from events.models import EventDate, SpecialEvent
from events.services import sales_end as event_sales_end
from hours.exceptions import SaleEnded
from hours.locking import give_back_places, lock_places, take_places
from hours.models import EntrySlot, MuseumDay
from hours.services import keeps_member_places, public_places_left, sales_end
from museum.exceptions import InvalidInput
from museum.response_cache import group_changed
from orders.exceptions import EventNotOnDate, MuseumClosed, SoldOut, UnknownEvent
from orders.models import Order
from orders.services import vouchers
from orders.signals import places_given_back


@dataclass(frozen=True)
class Taken:
    """The rows a sale counted its places on: its slot, or its event and the event date's row
    (by key); none of them for untimed general entry, counted on the day (its key, the date)."""

    slot: EntrySlot | None = None
    event: SpecialEvent | None = None
    event_date_id: int | None = None


def slot_for(*, ticket_date: date, entry_time: time | None) -> EntrySlot | None:
    """The slot an order names; on a timed day one must be named, on an untimed day none."""
    slots = EntrySlot.objects.filter(day_id=ticket_date)
    if entry_time is None:
        if slots.exists():
            raise InvalidInput(
                "entryTime", _("The museum sells timed entry on that day: name a slot.")
            )
        return None
    slot = slots.filter(entry_time=entry_time).first()
    if slot is None:
        raise InvalidInput("entryTime", _("There is no entry slot at that time on that day."))
    return slot


def _open_today(ticket_date: date) -> MuseumDay | None:
    """The day whose sale may have ended by now: `ticket_date` if it is today and open. Other
    days read nothing; a closed day is refused by the sale as closed."""
    if ticket_date != timezone.localdate():
        return None
    return MuseumDay.objects.filter(date=ticket_date, is_closed=False).first()


def refuse_if_sale_ended(*, ticket_date: date, slot: EntrySlot | None) -> None:
    """Today, general entry is sold until the museum closes and a slot until the next begins
    (hours.services.sales_end); SaleEnded after."""
    day = _open_today(ticket_date)
    if day is None:
        return
    entry_time = slot.entry_time if slot else None
    entry_times = day.slots.values_list("entry_time", flat=True) if slot else []
    if timezone.now() >= sales_end(day=day, entry_time=entry_time, entry_times=entry_times):
        if entry_time is None:
            raise SaleEnded(_("The museum has closed for today."))
        raise SaleEnded(
            _("Entry at %(time)s is no longer sold today.") % {"time": f"{entry_time:%H:%M}"},
            entryTime=f"{entry_time:%H:%M}",
        )


def refuse_if_event_sale_ended(*, event: SpecialEvent, ticket_date: date) -> None:
    """Today, an event's tickets are sold until it starts, or without a start of its own until
    the museum closes (events.services.sales_end); SaleEnded after."""
    if ticket_date != timezone.localdate():
        return
    day = None if event.starts_at else MuseumDay.objects.filter(date=ticket_date).first()
    if timezone.now() >= event_sales_end(event=event, on=ticket_date, day=day):
        raise SaleEnded(_("Tickets for this event are no longer sold today."))


def take(
    *,
    ticket_date: date,
    event_id: uuid.UUID | None,
    slot: EntrySlot | None,
    n: int,
    member: int = 0,
    taking: Mapping[int, int] | None = None,
) -> Taken:
    """Count n places on the sale's rows, `member` of them members' (a member visit's, which
    take the slot's kept member places first), beyond those vouchers keep but the sale's own
    (`taking`: voucher key: uses), or raise (the caller's transaction then undoes any
    counted)."""
    event = None
    if event_id is not None:
        event = SpecialEvent.objects.active().select_for_update().filter(pk=event_id).first()
        if event is None:
            raise UnknownEvent()
        refuse_if_event_sale_ended(event=event, ticket_date=ticket_date)
    event_date_id = _count(
        ticket_date=ticket_date, event=event, slot=slot, n=n, member=member, taking=taking
    )
    return Taken(slot=slot, event=event, event_date_id=event_date_id)


def take_earliest_slot(
    *, ticket_date: date, n: int, member: int = 0, taking: Mapping[int, int] | None = None
) -> Taken:
    """n places (`member` of them members') in the earliest slot of a timed day with room (or
    on an untimed day)."""
    slots = list(EntrySlot.objects.filter(day_id=ticket_date).order_by("entry_time"))
    if not slots:
        refuse_if_sale_ended(ticket_date=ticket_date, slot=None)
        _count(ticket_date=ticket_date, event=None, slot=None, n=n, member=member, taking=taking)
        return Taken()
    on_sale = _not_over(slots, ticket_date=ticket_date)
    if not on_sale:
        raise SaleEnded("Today's entry slots are no longer sold.")
    # Read without a lock: the conditional UPDATE decides, and a slot taken meanwhile is skipped.
    for slot in on_sale:
        if slot.capacity is not None and _left_for(slot, n=n, member=member) < n:
            continue
        try:
            _count(
                ticket_date=ticket_date, event=None, slot=slot, n=n, member=member, taking=taking
            )
        except SoldOut as sold_out:
            if sold_out.scope == "slot":
                continue  # its UPDATE changed nothing: the next one
            raise  # the day is full, whatever the slots say
        return Taken(slot=slot)
    raise sold_out_on(available=0, scope="day")


def _not_over(slots: list[EntrySlot], *, ticket_date: date) -> list[EntrySlot]:
    """The slots whose sale has not ended (today's day read once; other days: all)."""
    day = _open_today(ticket_date)
    if day is None:
        return slots
    times, now = [slot.entry_time for slot in slots], timezone.now()
    return [
        slot
        for slot in slots
        if now < sales_end(day=day, entry_time=slot.entry_time, entry_times=times)
    ]


def _count(
    *,
    ticket_date: date,
    event: SpecialEvent | None,
    slot: EntrySlot | None,
    n: int,
    member: int = 0,
    taking: Mapping[int, int] | None = None,
) -> int | None:
    """Count n places (`member` of them members') on the slot, then the day or the event date,
    beyond what vouchers keep there (but the sale's own, `taking`); the event date's key."""
    slots = EntrySlot.objects.filter(pk=slot.pk) if slot is not None else None
    days = event_dates = None
    event_date_id = None
    if event is not None:
        # Under the event's lock no edit adds or removes its dates, so the row found stays.
        dates = EventDate.objects.filter(event=event, date=ticket_date)
        event_date_id = dates.values_list("pk", flat=True).first()
        if event_date_id is None:
            raise EventNotOnDate()
        event_dates = EventDate.objects.filter(pk=event_date_id)
    else:
        days = MuseumDay.objects.filter(date=ticket_date, is_closed=False)
    kept = slot is not None and keeps_member_places(slot)
    held_back = _held_back(
        {
            "slot": slot.pk if slot else None,
            "day": ticket_date if days is not None else None,
            "event_date": event_date_id,
        },
        taking=taking,
    )
    if held_back:
        # Locked before they are counted: the UPDATE below then reads the vouchers' uses as
        # the last sale on these rows committed them (orders.services.vouchers).
        lock_places(slots=slots, days=days, event_dates=event_dates)
    full = take_places(
        n=n,
        slots=slots,
        days=days,
        event_dates=event_dates,
        member=member,
        kept=kept,
        held_back=held_back,
    )
    if full == "day" and days is not None and not days.exists():
        raise MuseumClosed()
    if full == "slot" and slots is not None:
        counted = slots.annotate(held_back=held_back.get("slot", Value(0))).first()
        if counted is None:  # removed meanwhile, with its day, by the weekly pattern
            raise MuseumClosed()
        left = _left_for(counted, n=n, member=member) - counted.held_back
        raise sold_out_on(available=max(left, 0), scope=full)
    if full is not None:
        row = {"day": days, "event_date": event_dates}[full]
        assert row is not None
        raise sold_out_on(available=_left(row, held_back=held_back.get(full, Value(0))), scope=full)
    if slot is not None:
        group_changed("slots")
    return event_date_id


def _held_back(rows: Mapping[str, object], *, taking: Mapping[int, int] | None) -> dict:
    """What vouchers hold back on the sale's rows (each kind's key, or None), for those rows
    where any voucher keeps places: none at all on most sales."""
    kept = vouchers.ROWS_KEPT.get()
    return {
        row: vouchers.held_back(row, taking=taking)
        for row, key in rows.items()
        if key is not None and (row, key) in kept
    }


def sold_out_on(*, available: int, scope: str) -> SoldOut:
    return SoldOut(
        f"Not enough places left: {available} available." if available else None,
        scope=scope,
        available=available,
    )


def _left_for(slot: EntrySlot, *, n: int, member: int) -> int:
    """The slot's places a sale of n (`member` of them members') may take: all its free ones
    for members alone, the public's (hours.services.public_places_left) otherwise."""
    if slot.capacity is None:
        return n
    if member >= n:
        return max(slot.capacity - slot.sold, 0)
    left = public_places_left(slot) or 0
    # The order's members claim kept places, which the public count left out.
    if member and keeps_member_places(slot):
        left += min(member, max(slot.member_places - slot.member_sold, 0))
    return left


def _left(row: QuerySet, *, held_back) -> int:
    counted = row.annotate(held_back=held_back).values_list("capacity", "sold", "held_back").first()
    if counted is None:  # removed meanwhile, with its day, by the weekly pattern
        raise MuseumClosed()
    capacity, sold, held = counted
    return max(capacity - sold - held, 0)


def give_back(*, order: Order, n: int, member: int = 0) -> None:
    """Uncount n places on the order's rows, `member` of them members'."""
    give_back_on(day=order.date, slot_id=order.slot_id, event_id=order.event_id, n=n, member=member)


def give_back_on(
    *,
    day: date,
    slot_id: int | None,
    event_id: uuid.UUID | None = None,
    n: int,
    member: int = 0,
) -> None:
    """Uncount n places, `member` of them members', on the rows a visit of `day` counts on: its
    slot, then the day or the event's date (an order's, or a group's request's)."""
    if n == 0:
        return
    give_back_places(
        n=n,
        member=member,
        slots=EntrySlot.objects.filter(pk=slot_id) if slot_id else None,
        days=None if event_id else MuseumDay.objects.filter(date=day),
        event_dates=(EventDate.objects.filter(event_id=event_id, date=day) if event_id else None),
    )
    if slot_id is not None:
        group_changed("slots")
    places_given_back.send(None, day=day, slot_id=slot_id, event_id=event_id, n=n)
