"""Holds that ran out and are not released yet, as a read that writes nothing counts them."""

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Count, Q
from django.utils import timezone

from events.models import EventDate
from hours.models import EntrySlot, MuseumDay
from orders.models import (
    Order,
    Ticket,
)


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
