"""Holds: places kept for an order until it is confirmed, given back when the hold runs out."""

import uuid
from collections.abc import Sequence
from datetime import date, datetime, timedelta

from django.db import transaction
from django.utils import timezone

from audit.models import Action
from audit.services import record
from hours.models import EntrySlot
from orders.exceptions import HoldExpired, HoldTooLong, OrderCancelled
from orders.models import Order, OrderStatus, Ticket
from orders.selectors import order_to_change, tickets_of
from orders.services.payments import (
    confirm_held,
    membership_refusal,
    refuse_unpaid_confirmation,
    void_hold,
)


def confirm_order(*, order_id: uuid.UUID, by) -> Order:
    """Turn a held order into a confirmed one while its hold lasts; its email goes then. Only an
    order with nothing to pay online: a partner's (paid on account) or a free one; a payment
    provider confirms the others (PaymentRequired)."""
    with transaction.atomic():
        order = order_to_change(order_id=order_id, by=by)
        now = timezone.now()
        ran_out = order.status == OrderStatus.HELD and order.hold_ran_out(now)
        refusal = None
        if ran_out:
            _release_hold(order=order, now=now)  # kept: the refusal below comes after the commit
        elif order.status == OrderStatus.EXPIRED:
            raise HoldExpired()
        elif order.status == OrderStatus.CANCELLED:
            raise OrderCancelled()
        elif order.status == OrderStatus.HELD:
            refuse_unpaid_confirmation(order)
            refusal = membership_refusal(order)
            if refusal is None:
                confirm_held(order, now=now)  # reads the order's tickets
                return order
            # Its places go back now; the refusal below comes after the commit.
            void_hold(order, now=now, changes={"refused": refusal.code})
        # A confirmed order is left as it is: a retried confirmation.
    if ran_out:
        raise HoldExpired()
    if refusal is not None:
        raise refusal
    order.sold_tickets = list(tickets_of(order))
    return order


def extend_hold(*, order_id: uuid.UUID, by, minutes: int, latest: datetime | None = None) -> Order:
    """Keep a held order's places `minutes` from now, while its hold lasts (HoldExpired after;
    OrderCancelled for a cancelled order), and never past `latest` (HoldTooLong, the hold left
    as it was). A confirmed order is left as it is. Only orders that confirm_order confirms (a
    partner's, a free one): a payment's hold is the payment's own (PaymentRequired)."""
    with transaction.atomic():
        order = order_to_change(order_id=order_id, by=by)
        now = timezone.now()
        if order.status == OrderStatus.HELD:
            refuse_unpaid_confirmation(order)
        if order.status == OrderStatus.HELD and not order.hold_ran_out(now):
            until = now + timedelta(minutes=minutes)
            if latest is not None and until > latest:
                raise HoldTooLong(latest=latest)
            order.hold_expires_at = until
            order.save(update_fields=["hold_expires_at"])
            record(
                action=Action.CHANGED,
                obj=order,
                by=by,
                changes={"hold_expires_at": order.hold_expires_at},
            )
        elif order.status in (OrderStatus.HELD, OrderStatus.EXPIRED):
            raise HoldExpired()
        elif order.status == OrderStatus.CANCELLED:
            raise OrderCancelled()
    return order


def release_expired_holds(
    *,
    ticket_date: date | None = None,
    event_id: uuid.UUID | None = None,
    slot: EntrySlot | None = None,
    voucher_ids: Sequence[int] = (),
    limit: int = 500,
) -> int:
    """Give back the places of holds that ran out (those on the given rows, or with tickets of
    the given vouchers, or all), and their vouchers' uses; how many."""
    now = timezone.now()
    due = Order.objects.filter(Order.run_out_unreleased(now))
    if ticket_date is not None:
        due = due.filter(date=ticket_date, event_id=event_id)
    if slot is not None:
        due = due.filter(slot=slot)
    if voucher_ids:
        due = due.filter(pk__in=Ticket.objects.filter(voucher__in=voucher_ids).values("order"))
    released = 0
    for order_id in due.order_by("hold_expires_at").values_list("pk", flat=True)[:limit]:
        with transaction.atomic():
            # Claim once: a confirmation or another release may have got there first.
            order = (
                Order.objects.select_for_update()
                .filter(Order.run_out_unreleased(now), pk=order_id)
                .first()
            )
            if order is not None:
                _release_hold(order=order, now=now)
                released += 1
    return released


def _release_hold(*, order: Order, now: datetime) -> None:
    void_hold(order, now=now, status=OrderStatus.EXPIRED)
