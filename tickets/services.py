"""Letting a ticket's holder in: the door's rules and the one-statement admission."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db import connections, router, transaction
from django.utils import timezone

from audit.models import Action
from audit.services import record_each
from events.models import SpecialEvent
from hours.models import EntrySlot, MuseumDay
from museum import metrics
from museum.exceptions import MuseumProblem
from orders.models import Ticket
from tickets.exceptions import (
    AfterClosing,
    AlreadyCheckedIn,
    NotPaid,
    TicketCancelled,
    TicketChanging,
    TicketRefused,
    TooEarly,
    WrongDay,
)
from tickets.selectors import Scan, scan_key, tickets_for_scan


def _latest_entry_time(now: datetime) -> time:
    """The latest entry time the door admits now, on the museum's today: a timed ticket is let in
    from its entry time less the allowance until the day ends (any, once the allowance reaches
    past midnight)."""
    latest = timezone.localtime(now + timedelta(minutes=settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES))
    return latest.time() if latest.date() == timezone.localdate(now) else time.max


@dataclass(frozen=True)
class _Rule:
    """One rule of the door, stated once: a condition on the ticket's row (SQL on tickets_ticket,
    true when the rule holds), its values at a moment (now, the database connection), and the
    refusal of a ticket that fails it. The admission's WHERE is every condition; a refused scan
    reads each as a column of the ticket, to name the first that failed. SQL, not ORM expressions,
    because the admission is SQL (_ADMIT)."""

    name: str
    condition: str
    values: Callable[..., list]
    refusal: Callable[[Ticket], TicketRefused]


def _too_early(ticket: Ticket) -> TicketRefused:
    assert ticket.slot is not None  # the rule only fails for a ticket with an entry slot
    entry_time = ticket.slot.entry_time
    return TooEarly(
        f"Entry from {entry_time:%H:%M}; the door lets its holders in "
        f"{settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES} minutes before.",
        ticket=ticket,
        entryTime=f"{entry_time:%H:%M}",
    )


def _already_checked_in(ticket: Ticket) -> TicketRefused:
    first_entry = ticket.checked_in_at
    assert first_entry is not None  # the rule only fails for an admitted ticket
    return AlreadyCheckedIn(
        f"Already checked in at {timezone.localtime(first_entry):%H:%M}.",
        ticket=ticket,
        firstEntryAt=first_entry.isoformat(),
    )


# In the order a refusal names them: a ticket failing several hears of the first.
_RULES = (
    _Rule(
        "not_cancelled",
        "tickets_ticket.cancelled_at IS NULL",
        lambda now, connection: [],
        lambda ticket: TicketCancelled(ticket=ticket),
    ),
    _Rule(
        "today",
        "tickets_ticket.date = %s",
        lambda now, connection: [_db_value(Ticket, "date", timezone.localdate(now), connection)],
        lambda ticket: WrongDay(ticket=ticket, ticketDate=ticket.date.isoformat()),
    ),
    # A held order only moves on to confirmed (admit) or to expired or cancelled, which cancel
    # its tickets: the first rule.
    _Rule(
        "paid",
        "NOT tickets_ticket.held",
        lambda now, connection: [],
        lambda ticket: NotPaid(ticket=ticket),
    ),
    # General entry, timed or not, until the museum closes (on the ticket's day, the rule above);
    # an event ticket's day is its event date, which has no times: all day.
    _Rule(
        "before_closing",
        "NOT EXISTS (SELECT 1 FROM hours_museumday d"
        " WHERE d.date = tickets_ticket.museum_day_id AND d.closes_at <= %s)",
        lambda now, connection: [
            _db_value(MuseumDay, "closes_at", timezone.localtime(now).time(), connection)
        ],
        lambda ticket: AfterClosing(ticket=ticket),
    ),
    _Rule(
        "entry_time_come",
        "NOT EXISTS (SELECT 1 FROM hours_entryslot s"
        " WHERE s.id = tickets_ticket.slot_id AND s.entry_time > %s)",
        lambda now, connection: [
            _db_value(EntrySlot, "entry_time", _latest_entry_time(now), connection)
        ],
        _too_early,
    ),
    # The claim, in the same WHERE: of two scanners reading the same ticket at once, one UPDATE
    # finds the row still unclaimed; the other (on PostgreSQL, once the first's row lock is
    # released, against the committed row) changes nothing and is refused here.
    _Rule(
        "unclaimed",
        "tickets_ticket.checked_in_at IS NULL",
        lambda now, connection: [],
        _already_checked_in,
    ),
)


@dataclass(frozen=True)
class Admission:
    """What one scan did: the tickets it admitted (at least one) and, for an order's code, the
    order's others with their refusals (a TicketRefused each, its ticket riding along)."""

    admitted: list[Ticket]
    refused: list[TicketRefused] = field(default_factory=list)
    order_code: str | None = None  # the scanned order's code; None for a ticket's scan

    @property
    def ticket(self) -> Ticket:
        """The first admitted ticket: the one a single ticket's scan names."""
        return self.admitted[0]


def check_in(*, scanned: str, by) -> Admission:
    """Admit the holder of the ticket the scanned text names (or an order's tickets), counting
    what the door did (museum/metrics.py)."""
    try:
        admission = _check_in(scanned=scanned, by=by)
    except MuseumProblem as refusal:
        metrics.CHECK_INS.labels("refused", refusal.code).inc()
        raise
    metrics.CHECK_INS.labels("admitted", "").inc(len(admission.admitted))
    for refused in admission.refused:
        metrics.CHECK_INS.labels("refused", refused.code).inc()
    return admission


def _check_in(*, scanned: str, by) -> Admission:
    """Admit the holder of the ticket the scanned text names once, on the ticket's day; for an
    order's code, every ticket of the order the rules let in, in one statement, and name the
    refusal of each other one. If none is admitted, raise the refusal of the first (for an order,
    with the whole Admission as its `admission`)."""
    scan = scan_key(scanned)
    now = timezone.now()
    admitted: dict = {}
    # A ticket refused by the admission that passes every rule when read changed in between (an
    # order paid, a check-in undone): the next admission sees it as it is now.
    for _ in range(3):
        refused: list[TicketRefused] = []
        changed: list[TicketRefused] = []
        # The admission and its audit records commit together.
        with transaction.atomic(savepoint=False):
            newly = _admit_valid(scan=scan, by=by, now=now)
            record_each(entries=[(Action.CHECKED_IN, ticket, {}) for ticket in newly], by=by)
        admitted.update((ticket.pk, ticket) for ticket in newly)
        if admitted and scan.names_one_ticket(t.confirmation_code for t in admitted.values()):
            break  # a ticket's scan, admitted: nothing else to read
        refused, changed = _refusals(scan=scan, now=now, excluding=admitted)
        if not (admitted or refused or changed):
            raise scan.not_found()
        if not changed:
            break
    else:
        refused += changed
    codes = [t.confirmation_code for t in admitted.values()]
    one_ticket = scan.names_one_ticket(codes + [p.ticket.confirmation_code for p in refused])
    admission = Admission(
        admitted=sorted(admitted.values(), key=lambda ticket: ticket.confirmation_code),
        refused=sorted(refused, key=lambda problem: problem.ticket.confirmation_code),
        order_code=None if one_ticket else scan.order_code,
    )
    if not admission.admitted:
        first = admission.refused[0]
        if admission.order_code is not None:
            first.admission = admission
        raise first
    return admission


def _refusals(
    *, scan: Scan, now: datetime, excluding
) -> tuple[list[TicketRefused], list[TicketRefused]]:
    """The tickets `scan` names but those `excluding`, in one SELECT that reads every rule as a
    column: the refusal of the first rule each fails now, and TicketChanging for each that passes
    them all (it changed since the admission)."""
    connection = connections[router.db_for_read(Ticket)]
    conditions = {
        f"door_{rule.name}": (rule.condition, rule.values(now, connection)) for rule in _RULES
    }
    refused: list[TicketRefused] = []
    changed: list[TicketRefused] = []
    for ticket in tickets_for_scan(scan, conditions=conditions, excluding=excluding):
        failed = next((rule for rule in _RULES if not getattr(ticket, f"door_{rule.name}")), None)
        if failed is None:
            changed.append(TicketChanging(ticket=ticket))
        else:
            refused.append(failed.refusal(ticket))
    return refused, changed


# The admission of the valid tickets a scan names, in one statement: claimed if every rule of the
# door holds (the AND of _RULES' conditions), returning what the door shows. An order's code admits
# each valid ticket of the order at once. SQL by hand because the ORM's update() returns only a
# count: through it, admitting a ticket takes a SELECT and an UPDATE, and this is the door's every
# scan, the most frequent write. PostgreSQL and SQLite (3.35 and later) both run it.
_ADMIT = """
UPDATE tickets_ticket SET checked_in_at = %s, checked_in_by_id = %s
WHERE ({scanned}) AND {rules}
RETURNING id, ticket_type, confirmation_code, event_id, slot_id, category_id,
  (SELECT e.name FROM events_specialevent e WHERE e.id = tickets_ticket.event_id),
  (SELECT s.entry_time FROM hours_entryslot s WHERE s.id = tickets_ticket.slot_id),
  (SELECT c.category FROM orders_visitorcategory c WHERE c.id = tickets_ticket.category_id),
  (SELECT c.name FROM orders_visitorcategory c WHERE c.id = tickets_ticket.category_id),
  (SELECT c.check_at_door FROM orders_visitorcategory c WHERE c.id = tickets_ticket.category_id)
"""
_ADMIT_WHERE = "\n  AND ".join(f"({rule.condition})" for rule in _RULES)
_ADMITTED = ("id", "ticket_type", "confirmation_code", "event_id", "slot_id", "category_id")


def _scanned_where(scan: Scan, connection) -> tuple[str, list]:
    """The tickets `scan` names, as SQL on tickets_ticket and its parameters."""
    if scan.ticket_id is not None:
        return "tickets_ticket.id = %s", [_db_value(Ticket, "id", scan.ticket_id, connection)]
    where: list[str] = []
    params: list = []
    if scan.ticket_codes:
        where.append(
            f"tickets_ticket.confirmation_code IN ({', '.join(['%s'] * len(scan.ticket_codes))})"
        )
        params += scan.ticket_codes
    if scan.order_code is not None:
        # The order's table through the ticket's foreign key: tickets does not import orders.
        order_model = Ticket._meta.get_field("order").related_model
        assert not isinstance(order_model, str)  # resolved once the apps are loaded
        orders = order_model._meta.db_table
        where.append(
            "tickets_ticket.order_id IN"
            f" (SELECT o.id FROM {orders} o WHERE o.confirmation_code = %s)"
        )
        params.append(scan.order_code)
    return " OR ".join(where), params


def _admit_valid(*, scan: Scan, by, now: datetime) -> list[Ticket]:
    """The tickets `scan` names that every rule of the door lets in now, admitted; the others
    unchanged."""
    today = timezone.localdate(now)
    if scan.date not in (None, today):
        return []  # the token names another day's ticket: refused without a statement
    alias = router.db_for_write(Ticket)
    connection = connections[alias]
    scanned, scanned_params = _scanned_where(scan, connection)
    params = [_db_value(Ticket, "checked_in_at", now, connection), by.pk, *scanned_params]
    for rule in _RULES:
        params += rule.values(now, connection)
    with connection.cursor() as cursor:
        cursor.execute(_ADMIT.format(scanned=scanned, rules=_ADMIT_WHERE), params)
        rows = cursor.fetchall()
    tickets = [_admitted(row, alias=alias, today=today) for row in rows]
    for ticket in tickets:
        ticket.cancelled_at, ticket.checked_in_at, ticket.checked_in_by = None, now, by
    return tickets


def _admitted(row, *, alias: str, today: date) -> Ticket:
    """The admitted ticket from the admission's row, with what the door shows."""
    own, shown = row[: len(_ADMITTED)], row[len(_ADMITTED) :]
    columns = {
        name: _py_value(Ticket, name, value) for name, value in zip(_ADMITTED, own, strict=True)
    }
    ticket = _loaded(Ticket, alias, {**columns, "date": today})
    event_name, entry_time, category, category_name, check_at_door = shown
    if ticket.event_id is not None:
        ticket.event = _loaded(SpecialEvent, alias, {"id": ticket.event_id, "name": event_name})
    if ticket.slot_id is not None:
        entry_time = _py_value(EntrySlot, "entry_time", entry_time)
        ticket.slot = _loaded(EntrySlot, alias, {"id": ticket.slot_id, "entry_time": entry_time})
    if ticket.category_id is not None:
        ticket.category = _loaded(
            Ticket._meta.get_field("category").related_model,
            alias,
            {
                "id": ticket.category_id,
                "category": category,
                "name": category_name,
                "check_at_door": bool(check_at_door),
            },
        )
    return ticket


def _loaded(model, alias: str, values: dict):
    """An instance of `model` from some of its columns, the others deferred (read if used), as
    QuerySet.only() makes them."""
    names = [field.attname for field in model._meta.concrete_fields if field.attname in values]
    return model.from_db(alias, names, [values[name] for name in names])


def _db_value(model, field: str, value, connection):
    return model._meta.get_field(field).get_db_prep_value(value, connection)


def _py_value(model, field: str, value):
    # SQLite answers dates, times and UUIDs as text; the field reads them as the ORM would.
    return None if value is None else model._meta.get_field(field).to_python(value)
