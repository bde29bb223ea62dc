"""Letting a ticket's holder in: the door's rules and the one-statement admission.

Each rule of the door is a condition on the ticket's row in SQL (`rules()`, true for a ticket the
rule lets in), its tables and columns named from the models (`_Table`), stated once and used
twice: the admission claims the scanned tickets that pass them
all, and a refused scan reads each rule as a boolean of the ticket (Django's documented RawSQL
expression, in the ORM's SELECT of the scanned tickets) to name the first that failed. A new rule
is one more entry, checked by both paths (tests/tickets/test_door_rules.py breaks each rule).

The claim is written by hand, `UPDATE ... SET checked_in_at ... WHERE <scan> AND <rules>
RETURNING <what the door shows>`, run through `Manager.raw()` (documented: the ORM reads the
returned columns into Ticket instances as it reads a SELECT's), because it is the door's every
scan and one statement replaces two: Django has no documented UPDATE ... RETURNING, and through
QuerySet.update(), which returns only a count, a valid scan would be an UPDATE and then a SELECT
of what it admitted, and would build both statements through the ORM on every scan. PostgreSQL
and SQLite (3.35 and later) both run it; the refusal's SELECT stays the ORM's (tickets_for_scan).

No rule may join another table (another table's row is read through a subquery): PostgreSQL
re-checks the WHERE on the very row it waited for once another scanner's row lock is released, so
of two scanners of one ticket exactly one claims it ("unclaimed" fails for the other).
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.db import connections, router, transaction
from django.db.models import BooleanField, Expression, Field, Model, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django.utils.translation import gettext as _
from modeltranslation.utils import get_language

from audit.models import Action
from audit.services import record_each, record_rows_sql
from hours.models import EntrySlot, MuseumDay
from museum import metrics
from museum.exceptions import MuseumProblem
from orders.models import Order, Ticket
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
from tickets.selectors import Scan, door_fields, scan_key, tickets_for_scan


def _latest_entry_time(now: datetime) -> time:
    """The latest entry time the door admits now, on the museum's today: a timed ticket is let in
    from its entry time less the allowance until the day ends (any, once the allowance reaches
    past midnight)."""
    latest = timezone.localtime(now + timedelta(minutes=settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES))
    return latest.time() if latest.date() == timezone.localdate(now) else time.max


@dataclass(frozen=True)
class _Moment:
    """What the rules compare a ticket with at a moment, each as the database takes it: the
    museum's today, its time of day, and the latest entry time the door admits."""

    today: Any
    time: Any
    latest_entry: Any

    @classmethod
    def at(cls, now: datetime, connection) -> "_Moment":
        local = timezone.localtime(now)
        return cls(
            today=_db_value(Ticket, "date", local.date(), connection),
            time=_db_value(MuseumDay, "closes_at", local.time(), connection),
            latest_entry=_db_value(EntrySlot, "entry_time", _latest_entry_time(now), connection),
        )


class _Table:
    """A model's table in hand-written SQL, quoted as the database quotes names, under its own
    name or an alias: `_Table(Ticket).held` is the column of Ticket's field `held`, `.pk` its
    primary key's; no table or column name is typed by hand."""

    def __init__(self, model: type[Model], alias: str = ""):
        self._model = model
        quote = connections[router.db_for_write(model)].ops.quote_name
        self._quote = quote
        self.name = quote(alias or model._meta.db_table)
        # What a FROM names: the table, and its alias if it has one.
        self.source = quote(model._meta.db_table) + (f" {self.name}" if alias else "")

    def __getattr__(self, field: str) -> str:
        return f"{self.name}.{self.bare(field)}"

    def bare(self, field: str) -> str:
        """The column alone, as an UPDATE's SET names it."""
        meta = self._model._meta
        column = meta.pk if field == "pk" else meta.get_field(field)
        assert isinstance(column, Field) and column.column  # a concrete field: it has a column
        return self._quote(column.column)


@dataclass(frozen=True)
class _Rule:
    """One rule of the door: the condition on the ticket's row that lets it in (SQL on the
    tickets' table, a subquery for another table's row, never a join), its values at a moment,
    and the refusal of a ticket it does not."""

    name: str
    condition: str
    values: Callable[[_Moment], list]
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


def _not_paid(ticket: Ticket) -> TicketRefused:
    if ticket.cancelled_at is None:
        return NotPaid(ticket=ticket)
    return NotPaid(
        _("The ticket's order was not paid before its hold ran out or it was cancelled."),
        ticket=ticket,
    )


def _already_checked_in(ticket: Ticket) -> TicketRefused:
    first_entry = ticket.checked_in_at
    assert first_entry is not None  # the rule only fails for an admitted ticket
    return AlreadyCheckedIn(
        f"Already checked in at {timezone.localtime(first_entry):%H:%M}.",
        ticket=ticket,
        firstEntryAt=first_entry.isoformat(),
    )


@functools.cache
def rules() -> tuple[_Rule, ...]:
    """The door's rules, in the order a refusal names them: a ticket failing several hears of
    the first."""
    ticket = _Table(Ticket)
    day = _Table(MuseumDay, alias="door_day")
    slot = _Table(EntrySlot, alias="door_slot")
    return (
        # First: a ticket of an order never paid (held, or its hold ran out, which cancels it)
        # hears so, as its PDF and image answer (orders.selectors.refuse_unless_printable).
        # Paying an order unholds its tickets; nothing holds them again.
        _Rule("paid", f"NOT {ticket.held}", lambda at: [], _not_paid),
        _Rule(
            "not_cancelled",
            f"{ticket.cancelled_at} IS NULL",
            lambda at: [],
            lambda ticket: TicketCancelled(ticket=ticket),
        ),
        _Rule(
            "today",
            f"{ticket.date} = %s",
            lambda at: [at.today],
            lambda ticket: WrongDay(ticket=ticket, ticketDate=ticket.date.isoformat()),
        ),
        # General entry, timed or not, until the museum closes (on the ticket's day, the rule
        # above); an event ticket's day is its event date, which has no times: all day.
        _Rule(
            "before_closing",
            f"NOT EXISTS (SELECT 1 FROM {day.source} WHERE {day.pk} = {ticket.museum_day}"
            f" AND {day.closes_at} <= %s)",
            lambda at: [at.time],
            lambda ticket: AfterClosing(ticket=ticket),
        ),
        _Rule(
            "entry_time_come",
            f"NOT EXISTS (SELECT 1 FROM {slot.source} WHERE {slot.pk} = {ticket.slot}"
            f" AND {slot.entry_time} > %s)",
            lambda at: [at.latest_entry],
            _too_early,
        ),
        # The claim, in the same WHERE: of two scanners reading the same ticket at once, one
        # UPDATE finds the row still unclaimed; the other (on PostgreSQL, once the first's row
        # lock is released, against the committed row) changes nothing and is refused here.
        _Rule("unclaimed", f"{ticket.checked_in_at} IS NULL", lambda at: [], _already_checked_in),
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
    return _counted(scan_key(scanned), by=by)


def check_in_scan(scan: Scan, *, by) -> Admission:
    """check_in for a scanned text already read (tickets.selectors.scan_key)."""
    return _counted(scan, by=by)


def check_in_order(*, order: Order, by) -> Admission:
    """Admit the order's tickets as its code's scan does, for an order already found (a member
    card's visit of the day): named by its key, not its code read again."""
    return _counted(Scan(order_id=order.pk, order_code=order.confirmation_code), by=by)


def check_in_some(*, order: Order, by, people: int, now: datetime) -> Admission:
    """Admit `people` of the order's tickets that every rule lets in now, in one statement (a
    group's arrivals: its order's code admits as many as came, not all it booked); if none may
    come in, raise the refusal of the first, the whole Admission riding along as an order's."""
    scan = Scan(order_id=order.pk, order_code=order.confirmation_code)
    try:
        admitted = _admit_valid(scan=scan, by=by, now=now, limit=people)
        if not admitted:
            refused, changed = _refusals(scan=scan, now=now, excluding=())
            if not (refused or changed):
                raise scan.not_found()
            problems = sorted(refused + changed, key=lambda p: p.ticket.confirmation_code)
            problems[0].admission = Admission(
                admitted=[], refused=problems, order_code=order.confirmation_code
            )
            raise problems[0]
    except MuseumProblem as refusal:
        metrics.CHECK_INS.labels("refused", refusal.code).inc()
        raise
    metrics.CHECK_INS.labels("admitted", "").inc(len(admitted))
    return Admission(
        admitted=sorted(admitted, key=lambda ticket: ticket.confirmation_code),
        order_code=order.confirmation_code,
    )


def _counted(scan: Scan, *, by) -> Admission:
    try:
        admission = _check_in(scan=scan, by=by)
    except MuseumProblem as refusal:
        metrics.CHECK_INS.labels("refused", refusal.code).inc()
        raise
    metrics.CHECK_INS.labels("admitted", "").inc(len(admission.admitted))
    for refused in admission.refused:
        metrics.CHECK_INS.labels("refused", refused.code).inc()
    return admission


def _check_in(*, scan: Scan, by) -> Admission:
    """Admit the holder of the ticket `scan` names once, on the ticket's day; for an order's
    code, every ticket of the order the rules let in, in one statement, and name the refusal of
    each other one. If none is admitted, raise the refusal of the first (for an order, with the
    whole Admission as its `admission`)."""
    now = timezone.now()
    admitted: dict = {}
    # A ticket refused by the admission that passes every rule when read changed in between (an
    # order paid, a check-in undone): the next admission sees it as it is now.
    for _attempt in range(3):
        refused: list[TicketRefused] = []
        changed: list[TicketRefused] = []
        newly = _admit_valid(scan=scan, by=by, now=now)
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
    boolean: the refusal of the first rule each fails now, and TicketChanging for each that passes
    them all (it changed since the admission)."""
    at = _Moment.at(now, connections[router.db_for_read(Ticket)])
    conditions: dict[str, Q | Expression] = {
        f"door_{rule.name}": RawSQL(rule.condition, rule.values(at), output_field=BooleanField())
        for rule in rules()
    }
    refused: list[TicketRefused] = []
    changed: list[TicketRefused] = []
    for ticket in tickets_for_scan(scan, conditions=conditions, excluding=excluding):
        failed = next((rule for rule in rules() if not getattr(ticket, f"door_{rule.name}")), None)
        if failed is None:
            changed.append(TicketChanging(ticket=ticket))
        else:
            refused.append(failed.refusal(ticket))
    return refused, changed


def _admit_valid(*, scan: Scan, by, now: datetime, limit: int | None = None) -> list[Ticket]:
    """The tickets `scan` names that every rule of the door lets in now (at most `limit` of them,
    in the order of their codes), admitted in one statement (an order's code admits each valid
    ticket of the order at once) with their audit records, and with what the door shows; the
    others unchanged."""
    if scan.date not in (None, timezone.localdate(now)):
        return []  # the token names another day's ticket: refused without a statement
    alias = router.db_for_write(Ticket)
    connection = connections[alias]
    scanned, scanned_values = _scanned(scan, connection)
    at = _Moment.at(now, connection)
    rule_values = [value for rule in rules() for value in rule.values(at)]
    values = [_db_value(Ticket, "checked_in_at", now, connection), by.pk]
    if limit is not None:
        # The subquery choosing which `limit` of the valid tickets: the same scan and rules.
        values += [*scanned_values, *rule_values, limit]
    values += [*scanned_values, *rule_values]
    sql = _claim(scanned=scanned, language=get_language(), limited=limit is not None)
    # Ticket instances, each column read as the ORM reads it; what the door shows of the
    # ticket's related rows rides along as attributes named as door_fields() names them.
    claim = Ticket.objects.db_manager(alias).raw
    if connection.vendor == "postgresql":
        # The claim and its records in one data-modifying WITH, in one round trip where a
        # transaction takes four (BEGIN, UPDATE, INSERT, COMMIT): the door's every scan.
        recording, recording_values, announce = record_rows_sql(
            action=Action.CHECKED_IN,
            model=Ticket,
            rows="admitted",
            key="id",
            shown="confirmation_code",  # Ticket.__str__: the records' "object"
            by=by,
            at=now,
            connection=connection,
        )
        sql = (
            f'WITH "admitted" AS ({sql}), "recorded" AS ({recording})'
            ' SELECT "admitted".*, "recorded"."id" AS "audit_record_id" FROM "admitted"'
            ' JOIN "recorded" ON "recorded"."object_id" = "admitted"."id"::text'
        )
        tickets = [_with_related(ticket, alias) for ticket in claim(sql, values + recording_values)]
        announce([(ticket.__dict__.pop("audit_record_id"), ticket) for ticket in tickets])
    else:
        # SQLite has no data-modifying WITH: the claim and its records commit together.
        with transaction.atomic(using=alias, savepoint=False):
            tickets = [_with_related(ticket, alias) for ticket in claim(sql, values)]
            record_each(entries=[(Action.CHECKED_IN, ticket, {}) for ticket in tickets], by=by)
    for ticket in tickets:
        ticket.checked_in_by = by
    return tickets


def _scanned(scan: Scan, connection) -> tuple[str, list]:
    """The tickets `scan` names (as Scan.tickets names them to the ORM), as SQL on the tickets'
    table and its values."""
    ticket = _Table(Ticket)
    if scan.ticket_id is not None:
        return f"{ticket.pk} = %s", [_db_value(Ticket, "id", scan.ticket_id, connection)]
    if scan.order_id is not None:
        return f"{ticket.order} = %s", [_db_value(Order, "id", scan.order_id, connection)]
    where: list[str] = []
    values: list = []
    if scan.ticket_codes:
        marks = ", ".join(["%s"] * len(scan.ticket_codes))
        where.append(f"{ticket.confirmation_code} IN ({marks})")
        values += scan.ticket_codes
    if scan.order_code is not None:
        order = _Table(Order, alias="door_order")
        where.append(
            f"{ticket.order} IN (SELECT {order.pk} FROM {order.source}"
            f" WHERE {order.confirmation_code} = %s)"
        )
        values.append(scan.order_code)
    return " OR ".join(where), values


@functools.cache
def _claim(*, scanned: str, language: str, limited: bool = False) -> str:
    """The claim of the tickets `scanned` (SQL) names that every rule lets in (`limited`: only
    those of them a subquery with a LIMIT chooses, a group's arrivals), returning what the door
    shows of each (door_fields, in `language`: it reads the active one's columns): the ticket's
    own columns, and a subquery for each column of a related row (RETURNING reads the updated
    row alone)."""
    ticket = _Table(Ticket)
    returned: dict[str, str] = {}
    for name in door_fields():
        relation, _sep, field = name.rpartition("__")
        if not relation:
            returned[name] = getattr(ticket, field)
            continue
        key = f"{relation}_id"  # the foreign key's attribute, as raw() reads it
        returned.setdefault(key, getattr(ticket, relation))
        related = _Table(_related_model(relation), alias=f"door_{relation}")
        returned[name] = (
            f"(SELECT {getattr(related, field)} FROM {related.source}"
            f" WHERE {related.pk} = {getattr(ticket, relation)})"
        )
    conditions = " AND ".join(f"({rule.condition})" for rule in rules())
    shown = ", ".join(f'{sql} AS "{name}"' for name, sql in returned.items())
    chosen = ""
    if limited:
        # The same table without an alias in the subquery: the rules' names read its rows there.
        chosen = (
            f"{ticket.pk} IN (SELECT {ticket.pk} FROM {ticket.source} WHERE ({scanned})"
            f" AND {conditions} ORDER BY {ticket.confirmation_code} LIMIT %s) AND "
        )
    return (
        f"UPDATE {ticket.name} SET {ticket.bare('checked_in_at')} = %s,"
        f" {ticket.bare('checked_in_by')} = %s"
        f" WHERE {chosen}({scanned}) AND {conditions} RETURNING {shown}"
    )


def _with_related(ticket: Ticket, alias: str) -> Ticket:
    """The claimed ticket with its related rows as far as the door reads them (from the claim's
    returned attributes); the rest of each deferred (read if used), as only() leaves it."""
    shown = {name: value for name, value in vars(ticket).items() if "__" in name}
    for relation in dict.fromkeys(name.split("__")[0] for name in shown):
        key = getattr(ticket, f"{relation}_id")
        if key is None:
            continue
        model = _related_model(relation)
        prefix = f"{relation}__"
        read = {
            # A raw statement's extra columns come as the database gives them (SQLite: times as
            # text, booleans as 0 and 1): each read as its field reads it.
            column: _py_value(model, column, value)
            for name, value in shown.items()
            if name.startswith(prefix) and (column := name.removeprefix(prefix))
        }
        setattr(ticket, relation, _loaded(model, alias, {"id": key, **read}))
    return ticket


def _related_model(relation: str) -> type[Model]:
    model = Ticket._meta.get_field(relation).related_model
    assert isinstance(model, type)  # resolved once the apps are loaded
    return model


def _loaded(model, alias: str, values: dict):
    """An instance of `model` from some of its columns, the others deferred (read if used), as
    QuerySet.only() makes them."""
    names = [f.name for f in model._meta.get_fields() if f.concrete and f.name in values]
    return model.from_db(alias, names, [values[name] for name in names])


def _db_value(model, field: str, value, connection):
    return model._meta.get_field(field).get_db_prep_value(value, connection)


def _py_value(model, field: str, value):
    return None if value is None else model._meta.get_field(field).to_python(value)
