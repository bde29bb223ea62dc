"""Scanners racing for the same tickets, on a real PostgreSQL server: each ticket is admitted
exactly once, however many scanners read it at the same moment, and one audit record says so."""

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.utils import timezone

from audit.models import Action, AuditRecord
from orders.models import Ticket
from tests.factories import OrderFactory, TicketFactory, staff_member
from tickets import services
from tickets.exceptions import AlreadyCheckedIn

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]

SCANNERS = 8


def scan_at_once(codes: list[str]) -> list:
    """Each code scanned by its own door at the same moment: the Admission or the refusal."""
    doors = [staff_member(username=f"door-{n}") for n in range(len(codes))]
    start = threading.Barrier(len(codes))

    def scan(code_and_door):
        code, door = code_and_door
        start.wait()
        try:
            return services.check_in(scanned=code, by=door)
        except AlreadyCheckedIn as refusal:
            return refusal
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(codes)) as pool:
        return list(pool.map(scan, zip(codes, doors, strict=True)))


def test_a_ticket_scanned_at_several_doors_at_once_is_admitted_once():
    ticket = TicketFactory(date=timezone.localdate())

    outcomes = scan_at_once([ticket.confirmation_code] * SCANNERS)

    admitted = [o for o in outcomes if isinstance(o, services.Admission)]
    assert len(admitted) == 1 and admitted[0].ticket.pk == ticket.pk
    assert Counter(type(o).__name__ for o in outcomes) == {
        "Admission": 1,
        "AlreadyCheckedIn": SCANNERS - 1,
    }
    stored = Ticket.objects.get(pk=ticket.pk)
    assert stored.checked_in_by_id == admitted[0].ticket.checked_in_by.pk
    records = AuditRecord.objects.filter(action=Action.CHECKED_IN, object_id=str(ticket.pk))
    assert records.count() == 1


def test_an_order_scanned_whole_while_its_tickets_are_scanned_admits_each_ticket_once():
    order = OrderFactory(date=timezone.localdate())
    tickets = [TicketFactory(date=order.date, order=order, buyer=order.buyer) for _ in range(3)]
    codes = [order.confirmation_code] * (SCANNERS - 3) + [t.confirmation_code for t in tickets]

    outcomes = scan_at_once(codes)

    admitted = Counter(
        ticket.pk
        for outcome in outcomes
        if isinstance(outcome, services.Admission)
        for ticket in outcome.admitted
    )
    assert admitted == {ticket.pk: 1 for ticket in tickets}
    assert not Ticket.objects.filter(order=order, checked_in_at__isnull=True).exists()
    records = AuditRecord.objects.filter(action=Action.CHECKED_IN)
    assert sorted(records.values_list("object_id", flat=True)) == sorted(
        str(ticket.pk) for ticket in tickets
    )
