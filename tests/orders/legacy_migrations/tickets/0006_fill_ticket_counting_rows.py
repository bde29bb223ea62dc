"""Point every ticket at the row that counts it, recreating a row a ticket lost.

Before tickets pointed at their rows, a weekly pattern could delete a museum day with tickets
sold (and recreate it later with nothing sold). Such a day comes back closed, or gets its count
back: sold is at least the number of tickets pointing at the row, its capacity no lower.
"""

from django.db import migrations
from django.db.models import Count, F, OuterRef, Subquery

RECREATED_NOTE = "Recreated for the tickets sold for this day; closed."


def _true_count(row, tickets: int) -> None:
    if row.sold < tickets:
        row.sold = tickets
        if row.capacity is not None and row.capacity < tickets:
            row.capacity = tickets
        row.save(update_fields=["sold", "capacity"])


def fill(apps, schema_editor):
    Ticket = apps.get_model("tickets", "Ticket")
    MuseumDay = apps.get_model("hours", "MuseumDay")
    EventDate = apps.get_model("events", "EventDate")

    general = Ticket.objects.filter(ticket_type="general")
    for row in general.values("date").annotate(tickets=Count("pk")).order_by("date"):
        day, created = MuseumDay.objects.get_or_create(
            date=row["date"],
            defaults={"is_closed": True, "note": RECREATED_NOTE, "edited_by_staff": True},
        )
        _true_count(day, row["tickets"])
    general.update(museum_day=F("date"))

    event = Ticket.objects.filter(ticket_type="event")
    grouped = event.values("event", "date").annotate(tickets=Count("pk")).order_by()
    for row in grouped:
        # A recreated date is sold out at what was sold, so nothing more is sold for it.
        slot, _ = EventDate.objects.get_or_create(
            event_id=row["event"], date=row["date"], defaults={"capacity": row["tickets"]}
        )
        _true_count(slot, row["tickets"])
    counting = EventDate.objects.filter(event=OuterRef("event"), date=OuterRef("date"))
    event.update(event_date=Subquery(counting.values("pk")[:1]))


class Migration(migrations.Migration):
    dependencies = [
        ("tickets", "0005_ticket_counting_row_fields"),
    ]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
