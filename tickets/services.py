"""Letting a ticket's holder in: the door's rules and the one-statement admission.

Each rule of the door is an ORM expression on the ticket (`_RULES`: a Q or an Exists, true for a
ticket the rule lets in), stated once and used twice: the admission claims the scanned tickets
that pass them all (`Ticket.objects.filter(scan, *rules).update(checked_in_at=...)`), and a
refused scan reads each rule as a boolean of the ticket to name the first that failed. A new
rule (a membership's, say) is one more entry, checked by the ORM.

The claim is one statement, UPDATE ... RETURNING what the door shows, because it is the door's
every scan: through QuerySet.update(), which returns only a count, a valid scan would be an UPDATE
and then a SELECT. Django 5.2 has no UPDATE ... RETURNING, so `_claim` has Django's own update
compiler write the UPDATE that `filter(...).update(...)` runs (Query.chain(UpdateQuery), as
QuerySet.update() does) and appends a RETURNING of ORM expressions compiled by the same compiler:
no table or column is named by hand. It is the one place we drive the ORM's compiler rather than
write the statement as SQL, because here the rules must stay ORM expressions and the scan stay one
statement. The statement is compiled once per kind of scan, with a stand-in expression for each
value (`_StandIn`), which each scan fills: building the expressions every time made a scan cost
five times as much CPU.

No rule may join another table (a related row is read through Exists): a join would make Django's
UPDATE re-read the ticket table in a subquery, whose rows PostgreSQL does not re-check after
waiting for another scanner's row lock, so two scanners could claim one ticket.
tests/tickets/test_door_rules.py holds the statement's shape and breaks each rule in both paths.
"""

import functools
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, time, timedelta
from typing import Any, cast

from django.conf import settings
from django.db import connections, router, transaction
from django.db.models import (
    Exists,
    Expression,
    F,
    Field,
    ForeignKey,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.sql import UpdateQuery
from django.utils import timezone
from django.utils.translation import gettext as _
from modeltranslation.utils import get_language

from audit.models import Action
from audit.services import record_each
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
from tickets.selectors import Scan, door_fields, scan_key, tickets_for_scan


def _latest_entry_time(now: datetime) -> time:
    """The latest entry time the door admits now, on the museum's today: a timed ticket is let in
    from its entry time less the allowance until the day ends (any, once the allowance reaches
    past midnight)."""
    latest = timezone.localtime(now + timedelta(minutes=settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES))
    return latest.time() if latest.date() == timezone.localdate(now) else time.max


@dataclass(frozen=True)
class _Moment:
    """What the rules compare a ticket with at a moment: the museum's today, its time of day, and
    the latest entry time the door admits. Each a value, or the claim's stand-in for one."""

    today: Any
    time: Any
    latest_entry: Any

    @classmethod
    def at(cls, now: datetime) -> "_Moment":
        local = timezone.localtime(now)
        return cls(today=local.date(), time=local.time(), latest_entry=_latest_entry_time(now))


@dataclass(frozen=True)
class _Rule:
    """One rule of the door: whether it lets a ticket in at a moment (an expression on Ticket, a
    Q or an Exists, never a join), and the refusal of a ticket it does not."""

    name: str
    holds: Callable[[_Moment], Q | Expression]
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


# In the order a refusal names them: a ticket failing several hears of the first.
_RULES = (
    # First: a ticket of an order never paid (held, or its hold ran out, which cancels it) hears
    # so, as its PDF and image answer (orders.selectors.refuse_unless_printable). Paying an order
    # unholds its tickets; nothing holds them again.
    _Rule("paid", lambda at: Q(held=False), _not_paid),
    _Rule(
        "not_cancelled",
        lambda at: Q(cancelled_at__isnull=True),
        lambda ticket: TicketCancelled(ticket=ticket),
    ),
    _Rule(
        "today",
        lambda at: Q(date=at.today),
        lambda ticket: WrongDay(ticket=ticket, ticketDate=ticket.date.isoformat()),
    ),
    # General entry, timed or not, until the museum closes (on the ticket's day, the rule above);
    # an event ticket's day is its event date, which has no times: all day.
    _Rule(
        "before_closing",
        lambda at: (
            ~Exists(
                MuseumDay.objects.filter(date=OuterRef("museum_day_id"), closes_at__lte=at.time)
            )
        ),
        lambda ticket: AfterClosing(ticket=ticket),
    ),
    _Rule(
        "entry_time_come",
        lambda at: (
            ~Exists(
                EntrySlot.objects.filter(pk=OuterRef("slot_id"), entry_time__gt=at.latest_entry)
            )
        ),
        _too_early,
    ),
    # The claim, in the same WHERE: of two scanners reading the same ticket at once, one UPDATE
    # finds the row still unclaimed; the other (on PostgreSQL, once the first's row lock is
    # released, against the committed row) changes nothing and is refused here.
    _Rule("unclaimed", lambda at: Q(checked_in_at__isnull=True), _already_checked_in),
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
    for _attempt in range(3):
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
    boolean: the refusal of the first rule each fails now, and TicketChanging for each that passes
    them all (it changed since the admission)."""
    at = _Moment.at(now)
    rules = {f"door_{rule.name}": rule.holds(at) for rule in _RULES}
    refused: list[TicketRefused] = []
    changed: list[TicketRefused] = []
    for ticket in tickets_for_scan(scan, conditions=rules, excluding=excluding):
        failed = next((rule for rule in _RULES if not getattr(ticket, f"door_{rule.name}")), None)
        if failed is None:
            changed.append(TicketChanging(ticket=ticket))
        else:
            refused.append(failed.refusal(ticket))
    return refused, changed


def _admit_valid(*, scan: Scan, by, now: datetime) -> list[Ticket]:
    """The tickets `scan` names that every rule of the door lets in now, admitted in one statement
    (an order's code admits each valid ticket of the order at once), with what the door shows;
    the others unchanged."""
    if scan.date not in (None, timezone.localdate(now)):
        return []  # the token names another day's ticket: refused without a statement
    alias = router.db_for_write(Ticket)
    scanned = scan.values()
    claim = _claim(alias=alias, language=get_language(), scanned=tuple(scanned))
    values = {**scanned, **asdict(_Moment.at(now)), "now": now, "by": by.pk}
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(claim.sql, claim.bind(values, connection))
        rows = cursor.fetchall()
    compiler = claim.query.get_compiler(alias)
    read = compiler.apply_converters(rows, compiler.get_converters(claim.returning))
    tickets = [_door_ticket(dict(zip(claim.names, row, strict=True)), alias) for row in read]
    for ticket in tickets:
        ticket.checked_in_by = by
    return tickets


@dataclass(frozen=True)
class _Slot:
    """Where a value of the claim goes among its statement's parameters, and the field that says
    how the database takes it."""

    name: str
    field: Field


class _StandIn(Expression):
    """A value of the claim in its statement compiled once (`_claim`): its parameter a _Slot, which
    each scan fills with the value."""

    def __init__(self, name: str, field: Field):
        super().__init__(output_field=field)
        self.slot = _Slot(name, field)

    def as_sql(self, compiler, connection):
        return "%s", [self.slot]


@dataclass(frozen=True)
class _Claim:
    """The claim of a scan's tickets, as one statement: its SQL, its parameters (a _Slot where a
    scan's value goes), what it returns of each ticket claimed (the names, and the columns as the
    ORM resolved them, which read the values back) and its query."""

    sql: str
    params: tuple
    names: tuple[str, ...]
    returning: tuple
    query: UpdateQuery

    def bind(self, values: dict[str, Any], connection) -> list:
        """The parameters, each slot filled with its value as its field sends it."""
        return [
            p.field.get_db_prep_value(values[p.name], connection) if isinstance(p, _Slot) else p
            for p in self.params
        ]


@functools.cache
def _claim(*, alias: str, language: str, scanned: tuple[str, ...]) -> _Claim:
    """The claim of the tickets a scan names (by its values' names, `scanned`) that every rule
    lets in, on the database `alias`: `Ticket.objects.filter(scan, *rules).update(checked_in_at=
    now, checked_in_by=by)` as Django's update compiler writes it, a stand-in for each value, and
    a RETURNING of what the door shows (door_fields, in `language`) compiled by the same compiler.
    Made once per database, kind of scan and language (door_fields reads the active one), and
    each scan binds its values: building and compiling the rules' expressions on every scan cost
    several times the rest of it."""
    at = _Moment(
        today=_StandIn("today", Ticket._meta.get_field("date")),
        time=_StandIn("time", MuseumDay._meta.get_field("closes_at")),
        latest_entry=_StandIn("latest_entry", EntrySlot._meta.get_field("entry_time")),
    )
    scan = Scan.filter({name: _StandIn(name, Scan.field(name)) for name in scanned})
    tickets = Ticket.objects.filter(scan, *(rule.holds(at) for rule in _RULES))
    query = cast(UpdateQuery, tickets.query.chain(UpdateQuery))
    query.add_update_values(
        {
            "checked_in_at": _StandIn("now", Ticket._meta.get_field("checked_in_at")),
            "checked_in_by": _StandIn("by", Ticket._meta.get_field("checked_in_by")),
        }
    )
    compiler = query.get_compiler(alias)
    update, params = compiler.as_sql()
    shown = _shown()
    # On the ticket's own table: a column that needs a join is refused (FieldError).
    columns = tuple(each.resolve_expression(query, allow_joins=False) for each in shown.values())
    compiled = [compiler.compile(column) for column in columns]
    assert not any(values for _, values in compiled)  # RETURNING takes no values
    returning = ", ".join(sql for sql, _ in compiled)
    return _Claim(f"{update} RETURNING {returning}", params, tuple(shown), columns, query)


def _shown() -> dict[str, F | Subquery]:
    """What the door shows of a ticket (door_fields) as expressions on its row alone (RETURNING
    takes no join): its own columns, and a subquery for each column of a related row."""
    shown: dict[str, F | Subquery] = {}
    for name in door_fields():
        relation, _sep, column = name.rpartition("__")
        if not relation:
            shown[name] = F(name)
            continue
        key = _relation(relation).attname
        shown.setdefault(key, F(key))
        # A plain QuerySet: the column as named (modeltranslation's would add a name's fallbacks).
        related: QuerySet = QuerySet(_related_model(relation))
        shown[name] = Subquery(related.filter(pk=OuterRef(key)).values(column))
    return shown


def _door_ticket(row: dict, alias: str) -> Ticket:
    """The ticket from what the door shows of it (a row of its claim), with its related rows as
    far as the door reads them; the rest of each deferred (read if used), as only() leaves it."""
    ticket = _loaded(Ticket, alias, {name: v for name, v in row.items() if "__" not in name})
    for relation in dict.fromkeys(name.split("__")[0] for name in row if "__" in name):
        key = row[_relation(relation).attname]
        if key is None:
            continue
        prefix = f"{relation}__"
        read = {name.removeprefix(prefix): v for name, v in row.items() if name.startswith(prefix)}
        model = _related_model(relation)
        setattr(ticket, relation, _loaded(model, alias, {model._meta.pk.attname: key, **read}))
    return ticket


def _relation(name: str) -> ForeignKey:
    field = Ticket._meta.get_field(name)
    assert isinstance(field, ForeignKey)  # the door reads its tickets' foreign keys alone
    return field


def _related_model(name: str) -> type[Model]:
    model = _relation(name).related_model
    assert not isinstance(model, str)  # resolved once the apps are loaded
    return model


def _loaded(model, alias: str, values: dict):
    """An instance of `model` from some of its columns, the others deferred (read if used), as
    QuerySet.only() makes them."""
    names = [field.attname for field in model._meta.concrete_fields if field.attname in values]
    return model.from_db(alias, names, [values[name] for name in names])
