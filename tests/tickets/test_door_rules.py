"""The door's rules, each stated once: every ticket one rule refuses is neither admitted by the
one-statement admission nor refused for another reason, and every valid kind is admitted in one
statement. A rule missing from either path (the admission's WHERE, the refusal's SELECT) fails
here."""

import datetime as dt

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from events.models import SpecialEvent
from hours.models import EntrySlot, MuseumDay
from orders.models import Order, OrderStatus, Ticket, VisitorCategory
from tests.conftest import admission_statements, claims
from tests.factories import (
    MuseumDayFactory,
    OrderFactory,
    SpecialEventFactory,
    TicketFactory,
    staff_member,
)
from tickets import exceptions, services
from tickets.selectors import scan_key

TODAY = dt.date(2030, 6, 12)
TOMORROW = TODAY + dt.timedelta(days=1)


def at(hour: int, minute: int = 0, day: dt.date = TODAY) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))


NOW = at(10, 20)  # with an allowance of 15 minutes, slots up to 10:35 are let in


@pytest.fixture(autouse=True)
def allowance(settings):
    settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES = 15


@pytest.fixture
def desk(db):
    return staff_member(username="desk")


def slot(entry_time: dt.time, day: dt.date = TODAY) -> EntrySlot:
    return EntrySlot.objects.create(day=MuseumDayFactory(date=day), entry_time=entry_time)


def order(status: str) -> Order:
    held = status == OrderStatus.HELD
    return OrderFactory(date=TODAY, status=status, hold_expires_at=at(11) if held else None)


# What breaks each rule, in the order the door names them: the ticket's fields, made when called.
BREAKS = {
    "not_paid": lambda: {"order": order(OrderStatus.HELD), "held": True},
    "cancelled": lambda: {"cancelled_at": at(9)},
    "wrong_day": lambda: {"date": TOMORROW},
    "closed": lambda: {},  # its day closes before NOW: refused_ticket sets it
    "too_early": lambda: {"slot": slot(dt.time(10, 40))},
    "already_checked_in": lambda: {"checked_in_at": at(10), "checked_in_by": staff_member()},
}


def refused_ticket(*reasons: str) -> Ticket:
    fields = {"date": TODAY}
    for reason in reasons:
        fields.update(BREAKS[reason]())
    ticket = TicketFactory(**fields)
    if "closed" in reasons:
        MuseumDay.objects.filter(date=ticket.date).update(closes_at=dt.time(10))
    return ticket


def expected_refusal(reason: str, ticket: Ticket) -> tuple[type, str, dict]:
    """(problem, detail, extras) of each refusal, as the API and the door page show them."""
    stored = Ticket.objects.get(pk=ticket.pk)
    first_entry = stored.checked_in_at
    return {
        "cancelled": (exceptions.TicketCancelled, "The ticket was cancelled.", {}),
        "wrong_day": (
            exceptions.WrongDay,
            "The ticket is for another day.",
            {"ticketDate": TOMORROW.isoformat()},
        ),
        "not_paid": (
            exceptions.NotPaid,
            # Its hold ran out or it was cancelled: it never will be paid.
            "The ticket's order was not paid before its hold ran out or it was cancelled."
            if stored.cancelled_at
            else "The ticket's order is held, not confirmed: it is not paid yet.",
            {},
        ),
        "closed": (exceptions.AfterClosing, "The museum has closed for today.", {}),
        "too_early": (
            exceptions.TooEarly,
            "Entry from 10:40; the door lets its holders in 15 minutes before.",
            {"entryTime": "10:40"},
        ),
        "already_checked_in": (
            exceptions.AlreadyCheckedIn,
            f"Already checked in at {timezone.localtime(at(10)):%H:%M}.",
            {"firstEntryAt": first_entry.isoformat() if first_entry else None},
        ),
    }[reason]


def test_every_rule_of_the_door_is_broken_here():
    # A rule added to the door without a way to break it here would go untested.
    assert len(services.rules()) == len(BREAKS)


@pytest.mark.parametrize("reason", list(BREAKS))
def test_a_ticket_one_rule_refuses_is_not_admitted_and_hears_why(
    desk, reason, django_assert_num_queries
):
    ticket = refused_ticket(reason)
    before = Ticket.objects.values("checked_in_at", "checked_in_by").get(pk=ticket.pk)
    problem, detail, extras = expected_refusal(reason, ticket)

    with time_machine.travel(NOW, tick=False):
        admitted = services._admit_valid(
            scan=scan_key(ticket.confirmation_code), by=desk, now=timezone.now()
        )
        # The admission that fails, then one SELECT naming the rule.
        with pytest.raises(problem) as refused, django_assert_num_queries(2):
            services.check_in(scanned=ticket.confirmation_code, by=desk)

    assert admitted == []
    assert Ticket.objects.values("checked_in_at", "checked_in_by").get(pk=ticket.pk) == before
    assert type(refused.value) is problem
    assert str(refused.value.detail) == detail
    assert refused.value.extra == extras
    assert refused.value.ticket.pk == ticket.pk


@pytest.mark.parametrize("first", range(len(BREAKS)))
def test_a_ticket_several_rules_refuse_hears_of_the_first(desk, first):
    reasons = list(BREAKS)[first:]
    ticket = refused_ticket(*reasons)
    problem, detail, extras = expected_refusal(reasons[0], ticket)

    with time_machine.travel(NOW, tick=False), pytest.raises(problem) as refused:
        services.check_in(scanned=ticket.confirmation_code, by=desk)

    assert type(refused.value) is problem
    assert (str(refused.value.detail), refused.value.extra) == (detail, extras)


VALID = {
    "general, untimed": lambda: {},
    "timed, at its entry time less the allowance": lambda: {"slot": slot(dt.time(10, 35))},
    "timed, after its entry time": lambda: {"slot": slot(dt.time(10))},
    "of a paid order": lambda: {"order": order(OrderStatus.CONFIRMED)},
    "event": lambda: {
        "ticket_type": "event",
        "event": SpecialEventFactory(name="Night at the Museum", dates=[TODAY]),
    },
}


@pytest.mark.parametrize("kind", list(VALID))
def test_a_valid_ticket_is_admitted_in_one_statement(desk, kind, django_assert_num_queries):
    ticket = TicketFactory(date=TODAY, **VALID[kind]())

    # The admission, and its audit record committed with it.
    with time_machine.travel(NOW, tick=False), django_assert_num_queries(admission_statements()):
        admitted = services.check_in(scanned=ticket.confirmation_code, by=desk).ticket

    assert admitted.pk == ticket.pk
    assert (admitted.checked_in_at, admitted.checked_in_by) == (NOW, desk)
    stored = Ticket.objects.get(pk=ticket.pk)
    assert (stored.checked_in_at, stored.checked_in_by) == (NOW, desk)


@pytest.mark.parametrize("scanned", ["ticket", "order"])
def test_the_admission_reads_every_rule_on_the_row_it_claims(desk, scanned):
    ticket = TicketFactory(date=TODAY, slot=slot(dt.time(10)))
    code = ticket.confirmation_code if scanned == "ticket" else ticket.order.confirmation_code

    with time_machine.travel(NOW, tick=False), CaptureQueriesContext(connection) as queries:
        services.check_in(scanned=code, by=desk)

    [claim] = claims(queries)
    # Not `id IN (SELECT ... FROM tickets_ticket ...)`, as Django writes an update that needs a
    # join: PostgreSQL re-checks a row it waited for, not a subquery's, and two scanners could
    # both claim the ticket.
    assert claim.startswith('UPDATE "tickets_ticket" SET') and 'FROM "tickets_ticket"' not in claim
    assert "RETURNING" in claim


def test_the_admission_reads_what_the_door_shows_in_the_staff_members_language(
    desk, django_assert_num_queries
):
    event = SpecialEventFactory(name="Night at the Museum", dates=[TODAY])
    SpecialEvent.objects.filter(pk=event.pk).update(name_de="Nacht im Museum")
    child = VisitorCategory.objects.get(category="child")
    ticket = TicketFactory(date=TODAY, ticket_type="event", event=event, category=child)

    with translation.override("de"), time_machine.travel(NOW, tick=False):
        # The admission and its audit record; naming the event and category reads nothing more.
        with django_assert_num_queries(admission_statements()):
            admitted = services.check_in(scanned=ticket.confirmation_code, by=desk).ticket
            assert admitted.category is not None and admitted.event is not None
            shown = (admitted.event.name, admitted.category.name, admitted.category.check_at_door)

    assert shown == ("Nacht im Museum", "Kind (6-17 Jahre)", True)


def test_a_ticket_that_becomes_valid_between_admission_and_refusal_is_admitted(desk, monkeypatch):
    held = order(OrderStatus.HELD)
    ticket = TicketFactory(date=TODAY, order=held, held=True)
    read = services.tickets_for_scan

    def paid_meanwhile(scan, **kwargs):
        # The buyer's payment lands after the admission refused the held order.
        Order.objects.filter(pk=held.pk).update(status=OrderStatus.CONFIRMED)
        Ticket.objects.filter(order=held).update(held=False)
        return read(scan, **kwargs)

    monkeypatch.setattr(services, "tickets_for_scan", paid_meanwhile)

    with time_machine.travel(NOW, tick=False):
        admitted = services.check_in(scanned=ticket.confirmation_code, by=desk).ticket

    assert admitted.pk == ticket.pk
    assert Ticket.objects.get(pk=ticket.pk).checked_in_at == NOW
