"""The migration that points existing tickets at the rows that count them."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from events.models import EventDate
from hours.models import MuseumDay
from tickets.models import Ticket

BEFORE = ("tickets", "0004_outboxemail_task_result_id")
DAY, LOST_DAY, EVENT_DAY = dt.date(2030, 1, 7), dt.date(2030, 1, 8), dt.date(2030, 1, 9)


def migrate(tickets_at=None):
    """Every app at its latest migration, tickets at `tickets_at` if given; the models then."""
    executor = MigrationExecutor(connection)
    targets = [
        tickets_at if tickets_at and app == "tickets" else (app, name)
        for app, name in executor.loader.graph.leaf_nodes()
    ]
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_existing_tickets_get_their_rows_and_lost_counts_come_back():
    old = migrate(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="ada")
    # A day the old weekly pattern deleted and recreated: one place, sold again as if free.
    old.get_model("hours", "MuseumDay").objects.create(
        date=DAY, opens_at=dt.time(9), closes_at=dt.time(17), capacity=1, sold=0
    )
    event = old.get_model("events", "SpecialEvent").objects.create(
        name="Tour", location="Hall", description="", price=Decimal("5")
    )
    slot = old.get_model("events", "EventDate").objects.create(event=event, date=EVENT_DAY, sold=1)
    OldTicket = old.get_model("tickets", "Ticket")
    common = {"buyer": user, "email": "ada@example.com", "price": Decimal("5")}
    for n, (kind, day, on) in enumerate(
        [("general", DAY, None), ("general", LOST_DAY, None), ("event", EVENT_DAY, event)]
    ):
        OldTicket.objects.create(
            ticket_type=kind, date=day, event=on, confirmation_code=f"code-{n}", **common
        )

    migrate()

    day, lost = MuseumDay.objects.get(date=DAY), MuseumDay.objects.get(date=LOST_DAY)
    assert (day.sold, day.capacity, day.is_closed) == (1, 1, False)
    assert (lost.sold, lost.is_closed, lost.edited_by_staff) == (1, True, True)
    tickets = {t.confirmation_code: t for t in Ticket.objects.all()}
    assert tickets["code-0"].museum_day_id == DAY and tickets["code-0"].event_date_id is None
    assert tickets["code-1"].museum_day_id == LOST_DAY
    assert tickets["code-2"].event_date_id == slot.pk and tickets["code-2"].museum_day_id is None
    assert EventDate.objects.get(pk=slot.pk).sold == 1
