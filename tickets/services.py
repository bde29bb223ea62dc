"""The rules of a ticket: its confirmation code, and letting its holder in."""

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db import connections, router
from django.utils import timezone

from events.models import SpecialEvent
from hours.models import EntrySlot, MuseumDay
from tickets.exceptions import (
    AfterClosing,
    AlreadyCheckedIn,
    NotPaid,
    TicketCancelled,
    TicketChanging,
    TooEarly,
    WrongDay,
)
from tickets.models import Ticket
from tickets.selectors import scan_key, ticket_for_scan

# Crockford's lowercase base32: no i, l, o or u, so a code read aloud is not misheard.
CODE_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def new_confirmation_code(prefix: str) -> str:
    """A code for an order ("order") or a ticket ("ticket-general"), e.g. order-2k7m9q-x4b1c."""
    # 55 random bits: unguessable, and a collision (a unique-constraint error) is not a
    # practical worry at a museum's volumes.
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(11))
    return f"{prefix}-{chars[:6]}-{chars[6:]}"


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
    refusal: Callable[[Ticket], Exception]


def _too_early(ticket: Ticket) -> Exception:
    assert ticket.slot is not None  # the rule only fails for a ticket with an entry slot
    entry_time = ticket.slot.entry_time
    return TooEarly(
        f"Entry from {entry_time:%H:%M}; the door lets its holders in "
        f"{settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES} minutes before.",
        ticket=ticket,
        entryTime=f"{entry_time:%H:%M}",
    )


def _already_checked_in(ticket: Ticket) -> Exception:
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


def check_in(*, scanned: str, by) -> Ticket:
    """Admit the holder of the ticket the scanned text names once, on the ticket's day."""
    key = scan_key(scanned.strip())
    now = timezone.now()
    # A ticket refused by the admission that passes every rule when read changed in between (an
    # order paid, a check-in undone): the next admission sees it as it is now.
    for _ in range(3):
        admitted = _admit_if_valid(key=key, by=by, now=now)
        if admitted is not None:
            return admitted
        refusal = _refusal(key=key, now=now)
        if refusal is not None:
            raise refusal
    raise TicketChanging()


def _refusal(*, key: dict, now: datetime) -> Exception | None:
    """The refusal of the first rule the ticket `key` names fails now, in one SELECT that reads
    every rule as a column; None if it passes them all; UnknownTicket if there is no ticket."""
    connection = connections[router.db_for_read(Ticket)]
    conditions = {
        f"door_{rule.name}": (rule.condition, rule.values(now, connection)) for rule in _RULES
    }
    ticket = ticket_for_scan(key, conditions=conditions)
    for rule in _RULES:
        if not getattr(ticket, f"door_{rule.name}"):
            return rule.refusal(ticket)
    return None


# The admission of a valid ticket, in one statement: claimed if every rule of the door holds (the
# AND of _RULES' conditions), returning what the door shows. SQL by hand because the ORM's
# update() returns only a count: through it, admitting a ticket takes a SELECT and an UPDATE, and
# this is the door's every scan, the most frequent write. PostgreSQL and SQLite (3.35 and later)
# both run it.
_ADMIT = """
UPDATE tickets_ticket SET checked_in_at = %s, checked_in_by_id = %s
WHERE {key} = %s AND {rules}
RETURNING id, ticket_type, confirmation_code, event_id, slot_id, category_id,
  (SELECT e.name FROM events_specialevent e WHERE e.id = tickets_ticket.event_id),
  (SELECT s.entry_time FROM hours_entryslot s WHERE s.id = tickets_ticket.slot_id),
  (SELECT c.category FROM orders_visitorcategory c WHERE c.id = tickets_ticket.category_id),
  (SELECT c.name FROM orders_visitorcategory c WHERE c.id = tickets_ticket.category_id),
  (SELECT c.check_at_door FROM orders_visitorcategory c WHERE c.id = tickets_ticket.category_id)
"""
_ADMIT_WHERE = "\n  AND ".join(f"({rule.condition})" for rule in _RULES)
_ADMITTED = ("id", "ticket_type", "confirmation_code", "event_id", "slot_id", "category_id")


def _admit_if_valid(*, key: dict, by, now: datetime) -> Ticket | None:
    """The ticket `key` names, admitted now if every rule of the door holds; else None, and
    nothing changed."""
    today = timezone.localdate(now)
    if key.get("date", today) != today:
        return None  # the token names another day's ticket: refused without a statement
    if "pk" in key:
        column, value = "id", key["pk"]
    else:
        column, value = "confirmation_code", key["confirmation_code"]
    alias = router.db_for_write(Ticket)
    connection = connections[alias]
    params = [
        _db_value(Ticket, "checked_in_at", now, connection),
        by.pk,
        _db_value(Ticket, column, value, connection),
    ]
    for rule in _RULES:
        params += rule.values(now, connection)
    with connection.cursor() as cursor:
        cursor.execute(_ADMIT.format(key=column, rules=_ADMIT_WHERE), params)
        row = cursor.fetchone()
    if row is None:
        return None
    ticket = _admitted(row, alias=alias, today=today)
    ticket.cancelled_at, ticket.checked_in_at, ticket.checked_in_by = None, now, by
    return ticket


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
