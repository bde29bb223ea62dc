"""Opening hours: the weekly pattern and how it becomes museum days."""

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import record, record_each, values_of
from hours.exceptions import CapacityBelowSold, MemberPlacesAboveCapacity
from hours.locking import lock_places
from hours.models import EntrySlot, MuseumDay
from museum.response_cache import group_changed

# Raised by set_slot_capacity, named here for its callers.
__all__ = ["CapacityBelowSold", "MemberPlacesAboveCapacity"]

# What the audit log records of a day.
AUDITED_DAY = ["opens_at", "closes_at", "is_closed", "note", "capacity"]

WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
DEFAULT_PATTERN = "mon-thu 09:00-18:00, fri 10:00-16:00"
# Ten years: longer is surely a typo, and one transaction holds the whole range.
MAX_DAYS = 3660
_RULE = re.compile(
    r"(?P<first>[a-z]{3})(?:-(?P<last>[a-z]{3}))?\s+"
    r"(?P<opens>[0-9]{2}:[0-9]{2})-(?P<closes>[0-9]{2}:[0-9]{2})"
)


@dataclass(frozen=True)
class Hours:
    opens_at: time
    closes_at: time


# Weekday (0 = Monday) to that day's hours; a weekday that is missing is closed.
WeeklyPattern = dict[int, Hours]

CLOSED_BY_PATTERN = "Closed by the weekly pattern; the tickets sold for it stay valid."


@dataclass
class SeedSummary:
    created: int = 0
    updated: int = 0
    closed_with_tickets: int = 0  # days the pattern closes that keep their row for their tickets
    removed: int = 0
    unchanged: int = 0
    kept_staff_edits: int = 0
    slots: int = 0
    tickets_on_closed_days: int = 0  # valid tickets for the days closed_with_tickets counts

    def __str__(self):
        text = (
            f"{self.created} created, {self.updated} updated, "
            f"{self.closed_with_tickets} closed with tickets sold, {self.removed} removed, "
            f"{self.unchanged} unchanged, {self.kept_staff_edits} staff edits kept"
        )
        return f"{text}, {self.slots} entry slots added" if self.slots else text

    @property
    def tickets_warning(self) -> str:
        """What staff must hear when the pattern closes days that have tickets, else ""."""
        if not self.closed_with_tickets:
            return ""
        return (
            f"{self.tickets_on_closed_days} ticket(s) are sold for the "
            f"{self.closed_with_tickets} day(s) the pattern closes: those days are closed, not "
            "removed, and their tickets stay valid. Tell the holders, or reopen the days."
        )


def parse_weekly_pattern(text: str) -> WeeklyPattern:
    """Read e.g. "mon-thu 09:00-18:00, fri 10:00-16:00"; raise ValueError saying what is wrong."""
    pattern: WeeklyPattern = {}
    for rule in filter(None, (part.strip().lower() for part in text.split(","))):
        match = _RULE.fullmatch(rule)
        if not match or not {match["first"], match["last"] or match["first"]} <= set(WEEKDAYS):
            raise ValueError(f"{rule!r} is not like 'mon-thu 09:00-18:00' or 'fri 10:00-16:00'")
        try:
            hours = Hours(time.fromisoformat(match["opens"]), time.fromisoformat(match["closes"]))
        except ValueError:
            raise ValueError(f"{rule!r} has a time of day that does not exist") from None
        if hours.opens_at >= hours.closes_at:
            raise ValueError(f"{rule!r} closes before it opens")
        first, last = (
            WEEKDAYS.index(match["first"]),
            WEEKDAYS.index(match["last"] or match["first"]),
        )
        if last < first:
            raise ValueError(f"{rule!r}: write the days from Monday towards Sunday")
        for weekday in range(first, last + 1):
            pattern[weekday] = hours
    return pattern


@transaction.atomic
def apply_weekly_pattern(
    *,
    start: date,
    days: int,
    pattern: WeeklyPattern,
    capacity: int | None = None,
    overwrite_staff_edits: bool = False,
    on_progress: Callable[[int], None] | None = None,
    slot_minutes: int | None = None,
    slot_capacity: int | None = None,
    slot_member_places: int = 0,
) -> SeedSummary:
    """Make the days in [start, start + days) follow the pattern, leaving staff edits alone.

    A day the pattern closes is removed, unless tickets are sold for it: then it is closed and
    keeps its row, its count and its tickets, so reopening it later cannot sell its places
    twice. `capacity` (general-entry tickets a day) applies to the days this creates. With
    `slot_minutes`, each open day in the range that has no entry slots yet gets one every
    `slot_minutes` from opening until closing, of `slot_capacity` places (None: unlimited),
    `slot_member_places` of them kept for members.
    """
    end = start + timedelta(days=days)
    in_range = MuseumDay.objects.filter(date__gte=start, date__lt=end)
    # Locked, slots first as a sale locks them: a purchase waits, so a day found without tickets
    # gets none before it is removed (with its slots).
    lock_places(slots=EntrySlot.objects.filter(day__in=in_range), days=in_range)
    existing = {day.date: day for day in in_range}
    # Tickets point at the day that counts them (the relation's name, not the model above).
    ticketed = set(in_range.filter(tickets__isnull=False).values_list("date", flat=True))
    summary = SeedSummary()
    to_create, to_update, to_close, to_remove = [], [], [], []
    for offset in range(days):
        current = start + timedelta(days=offset)
        hours, day = pattern.get(current.weekday()), existing.get(current)
        if day is not None and day.edited_by_staff and not overwrite_staff_edits:
            summary.kept_staff_edits += 1
        elif hours is None:
            if day is None:
                pass
            elif not (day.sold or current in ticketed):
                to_remove.append(current)
            elif (day.is_closed, day.edited_by_staff) == (True, False):
                summary.unchanged += 1
            else:
                day.is_closed, day.note, day.edited_by_staff = True, CLOSED_BY_PATTERN, False
                to_close.append(day)
        elif day is None:
            to_create.append(
                MuseumDay(
                    date=current,
                    opens_at=hours.opens_at,
                    closes_at=hours.closes_at,
                    capacity=capacity,
                )
            )
        elif (day.opens_at, day.closes_at, day.is_closed, day.edited_by_staff) != (
            hours.opens_at,
            hours.closes_at,
            False,
            False,
        ):
            # A reopened day keeps its row's capacity and its count of places sold.
            day.opens_at, day.closes_at = hours.opens_at, hours.closes_at
            day.is_closed, day.edited_by_staff, day.note = False, False, ""
            to_update.append(day)
        else:
            summary.unchanged += 1
        if on_progress:
            on_progress(offset + 1)
    MuseumDay.objects.bulk_create(to_create, batch_size=500)
    MuseumDay.objects.bulk_update(
        to_update + to_close,
        ["opens_at", "closes_at", "is_closed", "note", "edited_by_staff"],
        batch_size=500,
    )
    # Tickets point at their day with PROTECT: were one missed above, this raises, not loses it.
    MuseumDay.objects.filter(date__in=to_remove).delete()
    record_each(
        entries=[
            *((Action.CREATED, day, values_of(day, AUDITED_DAY)) for day in to_create),
            *((Action.CHANGED, day, values_of(day, AUDITED_DAY)) for day in to_update + to_close),
            *((Action.DELETED, existing[current], {}) for current in to_remove),
        ]
    )
    group_changed("hours")  # bulk writes send no signals
    summary.slots = add_entry_slots(
        start=start,
        end=end,
        minutes=slot_minutes,
        capacity=slot_capacity,
        member_places=slot_member_places,
    )
    summary.created, summary.updated, summary.removed = (
        len(to_create),
        len(to_update),
        len(to_remove),
    )
    summary.closed_with_tickets = len(to_close)
    summary.tickets_on_closed_days = MuseumDay.objects.filter(
        date__in=[day.date for day in to_close]
    ).aggregate(valid=Count("tickets", filter=Q(tickets__cancelled_at__isnull=True)))["valid"]
    return summary


def sales_end(*, day: MuseumDay, entry_time: time | None, entry_times: Iterable[time]) -> datetime:
    """When the day's sale of a slot (or, `entry_time` None, of untimed entry) ends, in the
    museum's zone: when the next slot begins, or for the last slot and untimed entry when the
    museum closes. Event tickets have no times and are sold all day."""
    later = [other for other in entry_times if entry_time is not None and other > entry_time]
    assert day.closes_at is not None  # an open day has hours (open_day_has_hours)
    ends = min(later) if later else day.closes_at
    return timezone.make_aware(datetime.combine(day.date, ends))


def member_places_released_at(slot: EntrySlot) -> datetime:
    """When the slot's unclaimed places kept for members go on sale to anyone:
    MUSEUM_MEMBER_PLACES_RELEASE_HOURS before it begins, in the museum's time zone."""
    begins = timezone.make_aware(datetime.combine(slot.day_id, slot.entry_time))
    return begins - timedelta(hours=settings.MUSEUM_MEMBER_PLACES_RELEASE_HOURS)


def keeps_member_places(slot: EntrySlot, *, now: datetime | None = None) -> bool:
    """Whether the slot still keeps its unclaimed member places from the public (before the
    cut-off)."""
    return slot.member_places > 0 and (now or timezone.now()) < member_places_released_at(slot)


def public_places_left(slot: EntrySlot, *, now: datetime | None = None) -> int | None:
    """What the public may still buy of the slot (None: unlimited): its free places, less the
    unclaimed kept ones before their cut-off, as hours.locking counts a public sale."""
    if slot.capacity is None:
        return None
    kept = 0
    if keeps_member_places(slot, now=now):
        kept = max(slot.member_places - slot.member_sold, 0)
    return max(slot.capacity - slot.sold - kept, 0)


# What the layers above hold back on the rows that count places besides the members' kept
# places (the sale's vouchers, orders/apps.py registers them): each answers, for a kind of row
# ("slot", "day") and those rows' keys, the places it holds back on each.
HOLDERS: list[Callable[[str, Sequence], Mapping]] = []


def register_held_back(holder: Callable[[str, Sequence], Mapping]) -> None:
    if holder not in HOLDERS:
        HOLDERS.append(holder)


def held_back_on(kind: str, keys: Sequence) -> dict:
    """The places held back on each of the rows of `kind` with these keys (0: none)."""
    held: dict = {key: 0 for key in keys}
    for holder in HOLDERS:
        for key, places in holder(kind, keys).items():
            held[key] = held.get(key, 0) + places
    return held


def slots_on_sale(*, day: MuseumDay, slots: list[EntrySlot] | None = None) -> list[EntrySlot]:
    """The open day's entry slots, each with `available` (places the public may buy, never more
    than the day has left: a slot's unclaimed member places are not, until their cut-off, nor
    those held back (`held_back_on`: a voucher's); None: unlimited; 0 once its sale ended) and
    `over` (its sale ended). `slots`: the day's slots in time order, read already (their counts
    as the caller reads them)."""
    if slots is None:
        slots = list(day.slots.order_by("entry_time"))
    times = [slot.entry_time for slot in slots]
    held = held_back_on("slot", [slot.pk for slot in slots])
    day_left = None
    if day.capacity is not None:
        day_left = max(day.capacity - day.sold - held_back_on("day", [day.date])[day.date], 0)
    now = timezone.now()
    for slot in slots:
        left = public_places_left(slot, now=now)
        if left is not None and held[slot.pk]:
            left = max(left - held[slot.pk], 0)
        if day_left is not None:
            left = day_left if left is None else min(left, day_left)
        slot.over = now >= sales_end(day=day, entry_time=slot.entry_time, entry_times=times)
        slot.available = 0 if slot.over else left
    return slots


def add_entry_slots(
    *, start: date, end: date, minutes: int | None, capacity: int | None, member_places: int = 0
) -> int:
    """Split each open day in [start, end) that has no slots into entry slots, `member_places`
    of each slot's places kept for members; how many made.

    Days that already have slots keep them as they are: they may have tickets sold. No
    `minutes`: none made.
    """
    if capacity is not None and member_places > capacity:
        raise MemberPlacesAboveCapacity()  # before a slot is made: the transaction undoes all
    if not minutes:
        return 0
    step = timedelta(minutes=minutes)
    days = MuseumDay.objects.filter(
        date__gte=start, date__lt=end, is_closed=False, slots__isnull=True
    ).values_list("date", "opens_at", "closes_at")
    slots = []
    for day, opens_at, closes_at in days:
        if opens_at is None or closes_at is None:
            continue  # not an open day: the open_day_has_hours constraint rules it out
        entry = datetime.combine(day, opens_at)
        closes = datetime.combine(day, closes_at)
        while entry < closes:
            slots.append(
                EntrySlot(
                    day_id=day,
                    entry_time=entry.time(),
                    capacity=capacity,
                    member_places=member_places,
                )
            )
            entry += step
    EntrySlot.objects.bulk_create(slots, batch_size=500)
    record_each(
        entries=[
            (Action.CREATED, slot, values_of(slot, ["entry_time", "capacity", "member_places"]))
            for slot in slots
        ]
    )
    group_changed("slots")
    return len(slots)


def set_slot_capacity(
    *, slot_id: int, capacity: int | None, member_places: int | None = None
) -> None:
    """Change a slot's capacity (and, given, its places kept for members) unless it would fall
    below its places sold or held, or below its kept places (MemberPlacesAboveCapacity).

    One conditional UPDATE, which a purchase's own on the row queues behind or ahead of: a
    sale landing meanwhile is never lost and never oversells.
    """
    slot = EntrySlot.objects.filter(pk=slot_id)
    before = slot.get()
    kept = before.member_places if member_places is None else member_places
    if capacity is not None and kept > capacity:
        raise MemberPlacesAboveCapacity()
    fits = slot if capacity is None else slot.filter(sold__lte=capacity)
    with transaction.atomic():
        if not fits.update(capacity=capacity, member_places=kept):
            sold = slot.values_list("sold", flat=True).get()
            raise CapacityBelowSold(
                _("%(sold)s places of this slot are sold or held already.") % {"sold": sold},
                sold=sold,
            )
        changes = {"capacity": [before.capacity, capacity]}
        if kept != before.member_places:
            changes["member_places"] = [before.member_places, kept]
        record(action=Action.CHANGED, obj=before, changes=changes)
    group_changed("slots")  # update() sends no signals


def close_days(*, dates: Iterable[date], note: str) -> int:
    """Close the given museum days all day, saying why; seeding leaves them closed."""
    # The hours stay on the row, so reopening the day in the admin is unticking one box.
    # Tickets already sold stay valid: staff decide what to tell their holders.
    days = MuseumDay.objects.filter(date__in=list(dates))
    with transaction.atomic():
        closed = days.update(is_closed=True, note=note, edited_by_staff=True)
        changes = {"is_closed": True, "note": note}
        record_each(entries=[(Action.CHANGED, day, changes) for day in days])
    group_changed("hours")  # update() sends no signals
    return closed
