"""How the sale's audit records read in the history staff see (audit.text): "Moved from 13:00 to
14:00 by desk1", "Ticket ticket-general-x7k2m9-e76mn (Child) cancelled by desk1, €7.50 paid out in
cash", "Ticket ... checked in by door1". Registered by the orders app (orders/apps.py)."""

from collections.abc import Iterable, Sequence
from datetime import date, time
from decimal import Decimal

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from audit.models import Action, AuditRecord
from audit.text import Change, actor, register
from hours.models import EntrySlot
from museum.i18n import day_in_words, money, time_in_words
from orders.models import OrderStatus, Ticket
from orders.providers import DEMO, DESK, ON_ACCOUNT, STRIPE

ORDER, TICKET = "orders.order", "orders.ticket"


def describe_orders(changes: Sequence[Change]) -> list[str]:
    tickets = ticket_names(
        key
        for change in changes
        for entry in change.records
        if entry.action in (Action.CANCELLED, Action.REFUNDED)
        for key in entry.changes.get("tickets", [])
    )
    slots = _entry_times(
        key
        for change in changes
        for entry in change.records
        if entry.action == Action.CHANGED
        for key in entry.changes.get("slot", [])
    )
    return [_order_change(change, tickets=tickets, slots=slots) for change in changes]


def describe_tickets(changes: Sequence[Change]) -> list[str]:
    names = ticket_names(change.first.object_id for change in changes)
    return [
        "; ".join(
            _("Ticket %(ticket)s checked in by %(by)s")
            % {"ticket": names.get(entry.object_id, entry.object_repr), "by": actor(entry)}
            for entry in change.records
        )
        if all(entry.action == Action.CHECKED_IN for entry in change.records)
        else ""
        for change in changes
    ]


def ticket_names(keys: Iterable[str]) -> dict[str, str]:
    """'code (category)' of each ticket, by its key: one query."""
    tickets = Ticket.objects.filter(pk__in=set(keys)).select_related("category")
    return {
        str(ticket.pk): (
            f"{ticket.confirmation_code} ({ticket.category.name})"
            if ticket.category
            else ticket.confirmation_code
        )
        for ticket in tickets.only("confirmation_code", "category__name")
    }


def _entry_times(keys: Iterable[int | None]) -> dict[int, time]:
    wanted = {key for key in keys if key is not None}
    return dict(EntrySlot.objects.filter(pk__in=wanted).values_list("pk", "entry_time"))


def _order_change(change: Change, *, tickets: dict, slots: dict) -> str:
    """The step in one sentence ("" for the generic wording of a step these words do not know):
    a sale says its payment, a cancellation what it paid back."""
    placed, confirmed = change.of(Action.CREATED), change.of(Action.CONFIRMED)
    paid, cancelled = change.of(Action.PAID), change.of(Action.CANCELLED)
    said_with: dict[str, AuditRecord | None] = {
        Action.CONFIRMED: placed,
        Action.PAID: placed or confirmed,
        Action.REFUNDED: cancelled,
        Action.PAID_OUT: cancelled,
    }
    parts = []
    for entry in change.records:
        if said_with.get(entry.action) is not None:
            continue
        words = _order_record(entry, tickets=tickets, slots=slots)
        if not words:
            return ""
        if entry is placed and confirmed is not None:
            words = _placed(entry, sold=True)
        if entry is placed and paid is not None:
            words = f"{words}, {_paid(paid, amount=False)}"
        elif entry is confirmed and paid is not None:
            words = f"{words}, {_paid(paid)}"
        if entry is cancelled:
            money_back = _paid_out(change.of(Action.PAID_OUT)) or _refunded(
                change.of(Action.REFUNDED)
            )
            words = f"{words}, {money_back}" if money_back else words
        parts.append(words)
    return "; ".join(parts)


def _order_record(entry: AuditRecord, *, tickets: dict, slots: dict) -> str:
    changes, by = entry.changes, actor(entry)
    if entry.action == Action.CREATED:
        return _placed(entry, sold=changes.get("status") != OrderStatus.HELD)
    if entry.action == Action.CONFIRMED:
        return _("Confirmed by %(by)s") % {"by": by}
    if entry.action == Action.PAID:
        return _paid(entry)
    if entry.action == Action.EXPIRED:
        return _("The hold ran out: its places were given back")
    if entry.action == Action.CANCELLED:
        return _cancelled(entry, tickets=tickets)
    if entry.action == Action.REFUNDED and changes.get("donations"):
        return _("Donation refunded by %(by)s: %(how)s") % {
            "by": by,
            "how": _refunded(entry) or _money(changes.get("amount")),
        }
    if entry.action == Action.REFUNDED:
        named = _tickets(changes.get("tickets", []), tickets)
        return f"{_refunded(entry) or _money(changes.get('amount'))} ({named})"
    if entry.action == Action.PAID_OUT:
        return _paid_out(entry)
    if entry.action == Action.CHANGED and {"date", "slot"} >= changes.keys() and changes:
        return _moved(entry, slots=slots)
    return ""


def _placed(entry: AuditRecord, *, sold: bool) -> str:
    changes = entry.changes
    if changes.get("donations") and not changes.get("tickets"):
        given = {"by": actor(entry), "total": _money(changes.get("total"))}
        if sold:
            return _("Donation of %(total)s taken by %(by)s") % given
        return _("Donation of %(total)s placed by %(by)s, held until paid") % given
    words = {
        "by": actor(entry),
        "count": changes.get("tickets", 0),
        "total": _money(changes.get("total")),
    }
    if sold:
        return (
            ngettext(
                "Sold by %(by)s: %(count)s ticket, %(total)s",
                "Sold by %(by)s: %(count)s tickets, %(total)s",
                words["count"],
            )
            % words
        )
    return (
        ngettext(
            "Placed by %(by)s: %(count)s ticket, %(total)s, held until paid",
            "Placed by %(by)s: %(count)s tickets, %(total)s, held until paid",
            words["count"],
        )
        % words
    )


def _paid(entry: AuditRecord, *, amount: bool = True) -> str:
    words = {
        "amount": _money(entry.changes.get("amount")),
        "provider": _provider(entry.changes.get("provider", "")),
    }
    if not amount:  # said with the sale's total
        return _("paid through %(provider)s") % words
    return _("%(amount)s paid through %(provider)s") % words


def _cancelled(entry: AuditRecord, *, tickets: dict) -> str:
    changes = entry.changes
    if changes.get("event_cancelled"):
        return _("Cancelled with its event")
    if changes.get("whole_order"):
        return _("Order cancelled by %(by)s") % {"by": actor(entry)}
    keys = changes.get("tickets", [])
    return ngettext(
        "Ticket %(tickets)s cancelled by %(by)s",
        "Tickets %(tickets)s cancelled by %(by)s",
        len(keys),
    ) % {"tickets": _tickets(keys, tickets), "by": actor(entry)}


def _refunded(entry: AuditRecord | None) -> str:
    """What a refund pays back, and how; "" for nothing."""
    if entry is None or not _amount(entry.changes.get("amount")):
        return ""
    words = {"amount": _money(entry.changes.get("amount"))}
    provider = entry.changes.get("provider")
    if provider == STRIPE:
        return _("%(amount)s refunded through Stripe") % words
    if provider == DESK:
        return _("%(amount)s to pay back at the desk") % words
    if provider == ON_ACCOUNT:
        return _("%(amount)s credited to the partner's account") % words
    if provider == DEMO:
        return _("%(amount)s refunded through the demo page") % words
    return _("%(amount)s to pay back by hand") % words


def _paid_out(entry: AuditRecord | None) -> str:
    if entry is None:
        return ""
    words = {"amount": _money(entry.changes.get("amount"))}
    method = entry.changes.get("method")
    if method == "cash":
        return _("%(amount)s paid out in cash") % words
    if method == "card":
        return _("%(amount)s paid back on the card terminal") % words
    return _("%(amount)s paid out at the desk") % words


def _moved(entry: AuditRecord, *, slots: dict) -> str:
    changes = entry.changes
    days = changes.get("date") or [None, None]
    entries = changes.get("slot") or [None, None]
    same_day = days[0] == days[1]
    before, after = (
        _visit(day, slots.get(key), time_only=same_day)
        for day, key in zip(days, entries, strict=True)
    )
    return _("Moved from %(before)s to %(after)s by %(by)s") % {
        "before": before,
        "after": after,
        "by": actor(entry),
    }


def _visit(day: date | str | None, entry_time: time | None, *, time_only: bool) -> str:
    hour = time_in_words(entry_time) if entry_time else ""
    if time_only and hour:
        return hour
    if isinstance(day, str):
        day = date.fromisoformat(day)
    words = day_in_words(day) if day else "–"
    return f"{words}, {hour}" if hour else words


def _tickets(keys: list[str], names: dict[str, str]) -> str:
    return ", ".join(names.get(str(key), str(key)) for key in keys)


def _provider(name: str) -> str:
    return {
        STRIPE: "Stripe",
        DESK: _("the desk"),
        DEMO: _("the demo page"),
        ON_ACCOUNT: _("the partner's account"),
    }.get(name, name)


def _amount(value) -> Decimal:
    return Decimal(str(value)) if value not in (None, "") else Decimal("0")


def _money(value) -> str:
    return money(_amount(value))


def register_descriptions() -> None:
    register(ORDER, describe_orders)
    register(TICKET, describe_tickets)
