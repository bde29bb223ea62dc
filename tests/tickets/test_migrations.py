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


WRAP_BEFORE = ("tickets", "0009_ticket_held")


@pytest.mark.django_db(transaction=True)
def test_every_kind_of_order_less_ticket_is_wrapped_in_an_order_of_one_and_back():
    old = migrate(WRAP_BEFORE)
    user = old.get_model("auth", "User").objects.create(username="ada")
    day = old.get_model("hours", "MuseumDay").objects.create(
        date=DAY, opens_at=dt.time(9), closes_at=dt.time(17), sold=5
    )
    slot = old.get_model("hours", "EntrySlot").objects.create(day=day, entry_time=dt.time(10))
    event = old.get_model("events", "SpecialEvent").objects.create(
        name="Tour", location="Hall", description="", price=Decimal("5")
    )
    event_date = old.get_model("events", "EventDate").objects.create(event=event, date=EVENT_DAY)
    OldTicket = old.get_model("tickets", "Ticket")
    general = {"ticket_type": "general", "date": DAY, "museum_day": day}
    kinds = {
        "general": general,
        "timed": {**general, "slot": slot},
        "event": {
            "ticket_type": "event",
            "date": EVENT_DAY,
            "event": event,
            "event_date": event_date,
        },
        "cancelled": {**general, "cancelled_at": dt.datetime(2029, 12, 1, tzinfo=dt.UTC)},
        "checked_in": {**general, "checked_in_at": dt.datetime(2030, 1, 7, 10, tzinfo=dt.UTC)},
        "anonymised": {**general, "email": "anonymised@anonymised.invalid"},
    }
    for code, fields in kinds.items():
        OldTicket.objects.create(
            buyer=user,
            confirmation_code=code,
            price=Decimal("5"),
            **{"email": "ada@example.com", "phone": "+31 20 1234567", **fields},
        )
    old.get_model("tickets", "OutboxEmail").objects.create(
        ticket=OldTicket.objects.get(confirmation_code="general"),
        sent_at=dt.datetime(2029, 12, 1, tzinfo=dt.UTC),
    )

    migrate()

    from orders.models import Order

    tickets = {t.confirmation_code: t for t in Ticket.objects.select_related("order")}
    assert Order.objects.count() == len(kinds)
    for code, ticket in tickets.items():
        order = ticket.order
        assert order.pk == ticket.pk and order.buyer_id == ticket.buyer_id
        assert (order.date, order.ticket_type, order.total) == (ticket.date, ticket.ticket_type, 5)
        assert order.created_at == ticket.purchased_at
        assert order.status == ("cancelled" if code == "cancelled" else "confirmed")
        assert order.email == kinds[code].get("email", "ada@example.com")
    assert tickets["timed"].order.slot_id == slot.pk
    assert tickets["event"].order.event_id == event.pk
    assert tickets["general"].order.confirmation_sent_at is not None
    assert tickets["checked_in"].checked_in_at is not None

    back = migrate(WRAP_BEFORE)
    assert not back.get_model("orders", "Order").objects.exists()
    restored = back.get_model("tickets", "Ticket").objects.get(confirmation_code="timed")
    assert (restored.email, restored.phone, restored.order_id) == (
        "ada@example.com",
        "+31 20 1234567",
        None,
    )
    migrate()
