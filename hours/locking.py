"""The rows that count places, and the one order in which every writer locks them.

Places are counted on the rows that hold the limits: an entry slot, then its museum day (general
entry) or an event date. A writer that touches several of them (a sale, a cancellation, a hold
released, the weekly pattern, a capacity edit) takes their row locks here, in one order (slots,
then days, then event dates; several rows of one kind by key), so two transactions never wait on
each other in a circle. The same order holds across the layers, first to last: the orders a
change touches (a membership's cancellation its own, then its member visits and held renewals,
by key), their payments, the memberships they sell or visit on (a confirmation asking the
membership again, a sale or a walk-in counting a member's day: orders.services.member_visits
.lock_membership), the orders' tickets, the vouchers that keep places a sale redeems or gives
back (by key), then the rows here, the buyer's account (a sale's limits,
orders.services.limits), the other vouchers it redeems or gives back (by key)
and, for a membership's sale on PostgreSQL, its mailbox's advisory lock
(orders.services.memberships.check_memberships); the order's kept documents (its tickets'
PDF) after its order's row. A sale document's number series (orders.services.receipts): a
receipt's or invoice's last in a confirmation, after its places; a credit note's when the
refunds of a cancellation are recorded, before its places go back (no writer takes it after a
place's row, so none waits in a circle). Nothing slow (rendering, mail, a provider's
call) runs while a lock is held: background work claims its row with a conditional UPDATE and
commits first (museum/lost_work.py). A sale counts with conditional UPDATEs
(`sold + n <= capacity`), whose row lock queues parallel buyers and re-checks the condition, so a
row is never oversold (its CheckConstraint backs this up). A slot's places kept for members
(`member_places`) are in the same condition: until their cut-off a public sale leaves the unclaimed
ones alone, and members take them first (`slot_has_room`); in it too are the places the layers
above hold back on any row (a voucher's: orders.services.vouchers.held_back). On PostgreSQL a
lock is waited for at most DB_LOCK_TIMEOUT_MS.

The rows come as querysets of their own models: this bottom layer names no model above it.
"""

from collections.abc import Mapping

from django.db.models import Expression, F, IntegerField, Q, QuerySet, Value
from django.db.models.functions import Greatest

Rows = QuerySet | None


def _in_lock_order(slots: Rows, days: Rows, event_dates: Rows) -> list[tuple[str, QuerySet]]:
    ordered = (("slot", slots), ("day", days), ("event_date", event_dates))
    return [(kind, rows) for kind, rows in ordered if rows is not None]


def lock_places(*, slots: Rows = None, days: Rows = None, event_dates: Rows = None) -> None:
    """Lock the counted rows given for the transaction."""
    for _, rows in _in_lock_order(slots, days, event_dates):
        list(rows.select_for_update().order_by("pk").values_list("pk", flat=True))


def has_room(n: int, *, held_back: Expression | None = None) -> Q:
    """A row has room for n places, beyond those `held_back` (an expression over the row: the
    places the layers above keep for others, a voucher's)."""
    if held_back is None:
        return Q(capacity__isnull=True) | Q(sold__lte=F("capacity") - n)
    return Q(capacity__isnull=True) | Q(capacity__gte=F("sold") + n + held_back)


def slot_has_room(
    n: int, *, member: int = 0, kept: bool = True, held_back: Expression | None = None
) -> Q:
    """A slot has room for n places, `member` of them members': members take the unclaimed kept
    places first, and while they are `kept` (before the cut-off) the public's never take them.
    Members alone, or after the cut-off, need only a free place. `held_back`: as has_room."""
    if member >= n or not kept:
        return has_room(n, held_back=held_back)
    # Of the kept places, those no member has claimed nor this sale's members claim now.
    unclaimed = Greatest(
        F("member_places") - F("member_sold") - member, Value(0), output_field=IntegerField()
    )
    taken = F("sold") + n + unclaimed
    if held_back is not None:
        taken = taken + held_back
    return Q(capacity__isnull=True) | Q(capacity__gte=taken)


def take_places(
    *,
    n: int,
    slots: Rows = None,
    days: Rows = None,
    event_dates: Rows = None,
    member: int = 0,
    kept: bool = True,
    held_back: Mapping[str, Expression] | None = None,
) -> str | None:
    """Count n places on each row given while it has room, `member` of them members' (counted
    on the slot's `member_sold` too; `kept`: the slot still keeps its unclaimed member places
    from the public) and beyond what `held_back` says each kind of row keeps for others; the
    kind of the first row that is full ("slot", "day" or "event_date"; the caller's transaction
    then undoes the ones counted), or None."""
    held_back = held_back or {}
    for kind, rows in _in_lock_order(slots, days, event_dates):
        if kind == "slot":
            room = slot_has_room(n, member=member, kept=kept, held_back=held_back.get(kind))
            counted = {"sold": F("sold") + n, "member_sold": F("member_sold") + member}
        else:
            room = has_room(n, held_back=held_back.get(kind))
            counted = {"sold": F("sold") + n}
        if not rows.filter(room).update(**counted):
            return kind
    return None


def give_back_places(
    *, n: int, slots: Rows = None, days: Rows = None, event_dates: Rows = None, member: int = 0
) -> None:
    """Uncount n places on each row given, `member` of them members'."""
    if n:
        for kind, rows in _in_lock_order(slots, days, event_dates):
            if kind == "slot":
                rows.update(sold=F("sold") - n, member_sold=F("member_sold") - member)
            else:
                rows.update(sold=F("sold") - n)
