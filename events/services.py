"""The rules for the museum's programme of special events."""

from collections.abc import Iterable
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from events.models import EventDate, SpecialEvent


@transaction.atomic
def create_event(
    *, name: str, location: str, description: str, price: Decimal, dates: Iterable[date]
) -> SpecialEvent:
    event = SpecialEvent.objects.create(
        name=name, location=location, description=description, price=price
    )
    EventDate.objects.bulk_create(EventDate(event=event, date=day) for day in sorted(set(dates)))
    return event


@transaction.atomic
def update_event(
    *, event: SpecialEvent, dates: Iterable[date] | None = None, **fields
) -> SpecialEvent:
    """Change only the fields given; `dates`, when given, becomes the event's whole set of dates."""
    # The row lock serialises concurrent edits of one event, so two PATCHes adding the same
    # date cannot both insert it. The fresh instance also has no stale prefetched dates.
    event = SpecialEvent.objects.select_for_update().get(pk=event.pk)
    for name, value in fields.items():
        setattr(event, name, value)
    event.save()
    if dates is not None:
        wanted = set(dates)
        current = set(event.dates.values_list("date", flat=True))
        event.dates.filter(date__in=current - wanted).delete()
        EventDate.objects.bulk_create(EventDate(event=event, date=day) for day in wanted - current)
    return event


@transaction.atomic
def cancel_event(*, event: SpecialEvent) -> None:
    """Take the event off the programme; its rows stay so that sold tickets keep their event."""
    SpecialEvent.objects.filter(pk=event.pk, cancelled_at__isnull=True).update(
        cancelled_at=timezone.now(), updated_at=timezone.now()
    )
