"""A new order, whatever it sells: the one builder of the sale's orders (orders.services.sale) and
a membership's (orders.services.memberships), so that what every new order shares is stated once:
its code, channel and mailbox, the hold and its length, whether it stays held until paid, being
confirmed at once otherwise (a partner's paid on account), its audit record and its count."""

from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.utils import timezone

from audit.models import Action
from audit.services import record, record_each
from museum import metrics
from orders.codes import new_confirmation_code
from orders.models import Order, OrderStatus
from orders.services.limits import mailbox_of
from orders.services.payments import (
    channel_of,
    mark_confirmed,
    needs_payment,
    record_on_account_payment,
)
from orders.services.receipts import issue_receipt
from orders.services.vouchers import redeemed


def new_order(
    *,
    buyer,
    email: str,
    language: str,
    kind: str,
    day: date,
    total: Decimal,
    hold_until: datetime | None = None,
    **details,
) -> Order:
    """An order of `kind` (OrderKind) for `day`, not saved yet: held for MUSEUM_HOLD_MINUTES (or
    until `hold_until`), with a new code, on its buyer's channel, counted by its email's mailbox.
    `details`: the rest of its fields (name, phone, event, slot, membership)."""
    now = timezone.now()
    return Order(
        buyer=buyer,
        email=email,
        mailbox=mailbox_of(email),
        language=language,
        status=OrderStatus.HELD,
        hold_expires_at=hold_until or now + timedelta(minutes=settings.MUSEUM_HOLD_MINUTES),
        confirmation_code=new_confirmation_code("order"),
        ticket_type=kind,
        date=day,
        total=total,
        channel=channel_of(buyer),
        **details,
    )


def stays_held(order: Order, *, hold: bool = False) -> bool:
    """Whether the new order stays held: asked to (`hold`, until confirm_order), or an online
    order with a price, until a provider confirms its payment."""
    return hold or needs_payment(order)


def settle_new(order: Order, *, held: bool, saved: bool = False) -> None:
    """The new order stays held, or is confirmed at once (free, or a partner's, paid on account:
    its payment recorded); inserted, unless it was `saved` already (a membership's, whose lines
    are written before it is confirmed)."""
    if not held:
        mark_confirmed(order, now=timezone.now(), new=not saved)
        record_on_account_payment(order)
    elif not saved:
        order.save(force_insert=True)


def record_new(order: Order, *, by, held: bool, changes: dict) -> None:
    """The new order's audit record (`changes`: what it keeps of it) and its count; confirmed at
    once, its vouchers' `redeemed` in the same INSERT, and its receipt or invoice
    (orders.services.receipts)."""
    redemptions = [] if held else redeemed(getattr(order, "sold_tickets", ()))
    if redemptions:
        record_each(entries=[(Action.CREATED, order, changes), *redemptions], by=by)
    else:
        record(action=Action.CREATED, obj=order, by=by, changes=changes)
    if held:
        metrics.count_orders(metrics.ORDERS_HELD)
    else:
        # Confirmed at once, its lines written: last, as its number's lock is held to the commit.
        issue_receipt(order)
