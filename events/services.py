"""The rules for the museum's programme of special events."""

import uuid
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import Max, ProtectedError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from audit.models import Action
from audit.services import changed_fields, record, values_of
from events.models import EventDate, SpecialEvent
from hours.exceptions import CapacityBelowSold
from hours.models import MuseumDay
from museum.exceptions import InvalidInput, MuseumProblem, NotFound
from museum.i18n import museum_language

__all__ = ["CapacityBelowSold"]  # raised by update_event, named here for its callers

# What the audit log records of an event.
AUDITED = ["name", "location", "description", "price", "capacity", "starts_at", "ends_at"]


def sales_end(*, event: SpecialEvent, on: date, day: MuseumDay | None) -> datetime:
    """When the sale of the event's tickets for its date `on` ends, its cut-off, in the museum's
    zone: when it starts, or, without a start of its own, when the museum closes that day (`day`,
    the museum day of `on` if there is one); with neither, at the day's end."""
    if event.starts_at is not None:
        ends = event.starts_at
    elif day is not None and not day.is_closed and day.closes_at is not None:
        ends = day.closes_at
    else:
        return timezone.make_aware(datetime.combine(on + timedelta(days=1), time.min))
    return timezone.make_aware(datetime.combine(on, ends))


class DatesHaveTickets(MuseumProblem):
    default_code = "dates_have_tickets"
    title = _("Tickets sold for a removed date")


@transaction.atomic
def create_event(
    *,
    name: str,
    location: str,
    description: str,
    price: Decimal,
    dates: Iterable[date],
    capacity: int | None = None,
    starts_at: time | None = None,
    ends_at: time | None = None,
    **translations: str | None,
) -> SpecialEvent:
    """`name`, `location` and `description` are the museum's own language's; `translations` may
    give others by column (`name_de`...)."""
    event = SpecialEvent(
        price=price, capacity=capacity, starts_at=starts_at, ends_at=ends_at, **translations
    )
    with museum_language():
        event.name, event.location, event.description = name, location, description
    _check_times(event)
    event.save()
    days = sorted(set(dates))
    EventDate.objects.bulk_create(
        EventDate(event=event, date=day, capacity=capacity) for day in days
    )
    record(action=Action.CREATED, obj=event, changes={**values_of(event, AUDITED), "dates": days})
    return event


def _check_times(event: SpecialEvent) -> None:
    """An event with an end has a start before it (the event_ends_after_it_starts constraint)."""
    if event.ends_at is not None and (event.starts_at is None or event.ends_at <= event.starts_at):
        raise InvalidInput("endTime", str(_("An event ends after it starts.")))


def locked_event(event_id: uuid.UUID) -> SpecialEvent:
    """The event, not cancelled, under its row lock; else NotFound.

    The lock serialises edits, cancellations and sales of one event (a sale takes it first), so
    the checks after it see every ticket sold.
    """
    event = SpecialEvent.objects.active().select_for_update().filter(pk=event_id).first()
    if event is None:
        raise NotFound()
    return event


@transaction.atomic
def update_event(
    *, event_id: uuid.UUID, dates: Iterable[date] | None = None, **fields
) -> SpecialEvent:
    """Change only the fields given; `dates`, when given, becomes the event's whole set of dates.
    A text by its own name (`name`) is the museum's own language's; by its column (`name_de`), that
    language's."""
    event = locked_event(event_id)
    with museum_language():
        before = values_of(event, AUDITED)
        for name, value in fields.items():
            setattr(event, name, value)
        changes = changed_fields(before, event, AUDITED)
    if dates is not None:
        old_dates = sorted(_replace_dates(event=event, wanted=set(dates)))
        if old_dates != sorted(set(dates)):
            changes["dates"] = [old_dates, sorted(set(dates))]
    if "capacity" in fields:
        _set_capacity(event=event, capacity=event.capacity)
    _check_times(event)
    event.save()
    if changes:
        record(action=Action.CHANGED, obj=event, changes=changes)
    return event


def _replace_dates(*, event: SpecialEvent, wanted: set[date]) -> set[date]:
    """Make `wanted` the event's dates; the dates it had."""
    current = {slot.date: slot for slot in event.dates.all()}
    removed = [slot for day, slot in current.items() if day not in wanted]
    if sold := [slot.date.isoformat() for slot in removed if slot.sold]:
        raise DatesHaveTickets(
            _("Tickets are sold for %(dates)s; those dates cannot be removed.")
            % {"dates": ", ".join(sold)},
            dates=sold,
        )
    leaving = EventDate.objects.filter(pk__in=[slot.pk for slot in removed])
    try:
        leaving.delete()
    except ProtectedError:
        # Tickets point at the date's row: the database keeps it even where sold says 0.
        held = sorted(
            {
                day.isoformat()
                for day in leaving.filter(tickets__isnull=False).values_list("date", flat=True)
            }
        )
        raise DatesHaveTickets(
            _("Tickets are sold for %(dates)s; those dates cannot be removed.")
            % {"dates": ", ".join(held)},
            dates=held,
        ) from None
    EventDate.objects.bulk_create(
        EventDate(event=event, date=day, capacity=event.capacity) for day in wanted - current.keys()
    )
    return set(current)


def most_sold_on_one_date(event: SpecialEvent) -> int:
    return event.dates.aggregate(most=Max("sold"))["most"] or 0


def _set_capacity(*, event: SpecialEvent, capacity: int | None) -> None:
    most_sold = most_sold_on_one_date(event)
    if capacity is not None and capacity < most_sold:
        raise CapacityBelowSold(
            _("%(sold)s tickets are already sold for one date; capacity cannot be %(capacity)s.")
            % {"sold": most_sold, "capacity": capacity},
            sold=most_sold,
        )
    event.dates.update(capacity=capacity)
