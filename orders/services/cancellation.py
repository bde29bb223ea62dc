"""Cancellation: an order or one of its tickets by its buyer (until the deadline) or staff, and
every order of an event the museum calls off; places freed at once, what was paid paid back
(orders.services.payments)."""

import uuid
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import AuditEntry, record, record_each
from events.models import SpecialEvent
from events.services import locked_event
from museum import metrics
from museum.exceptions import InvalidInput, NotFound
from orders.exceptions import CheckedIn, GiftCardSold, GroupOrder, OrderCancelled, TooLate
from orders.models import (
    Channel,
    MembershipSale,
    Order,
    OrderKind,
    OrderStatus,
    RefundSource,
    Ticket,
    TicketImage,
    Validity,
)
from orders.selectors import CANCEL_ANY_ORDER, cancel_deadline, order_to_change, tickets_of
from orders.services import donations as giving
from orders.services import vouchers
from orders.services.memberships import cancel_membership_order
from orders.services.payments import mail_change, pay_back_parts, refund_tickets, void_hold
from orders.services.places import give_back
from orders.services.taxes import donations_of


@transaction.atomic
def cancel_order(
    *,
    order_id: uuid.UUID,
    by,
    ticket_id: uuid.UUID | None = None,
    even_if_checked_in: bool = False,
    as_buyer: bool = False,
    refund_to_gift_card: bool = False,
) -> Order:
    """Cancel the order, or one of its tickets: places freed at once, refunds recorded, and a
    confirmed order's visitor mailed what it holds now. `refund_to_gift_card`: what its payments
    other than gift cards took goes onto a new gift card instead of back through them (staff,
    or its buyer where MUSEUM_GIFT_CARD_REFUNDS_FOR_BUYERS allows).

    A ticket already checked in is refused (CheckedIn), unless staff who may cancel any order
    say `even_if_checked_in`; the ticket then records who cancelled it. `as_buyer`: `by` is the
    order's buyer acting through its cancel link, held to the buyer's rules whatever else the
    account may do (a desk sale's buyer is the staff member who sold it).
    """
    order = order_to_change(order_id=order_id, by=by)
    if not order.sells_visit and ticket_id is not None:
        raise NotFound()  # it has no tickets: not one of them is cancelled as the whole order
    if refund_to_gift_card:
        _refuse_gift_card_refund(order, by=by, as_buyer=as_buyer)
    _refuse_unless_open(order)
    if order.ticket_type == OrderKind.DONATION:
        # Given once paid, whatever the deadline: only staff refund a donation, one by one
        # (orders.services.donations.refund_donation); a hold may be let go.
        giving.refuse_unless_held(order)
        void_hold(order, now=timezone.now())
        order.sold_tickets = []
        return order
    any_order = by.has_perm(CANCEL_ANY_ORDER) and not as_buyer
    now, deadline = timezone.now(), cancel_deadline(order=order)
    if now > deadline and not any_order:
        raise TooLate(deadline=deadline.isoformat())
    if order.sells_memberships:
        _cancel_membership(order, by=by, any_order=any_order, now=now)
        return order
    if order.sells_gift_cards:
        if order.status != OrderStatus.HELD:
            raise GiftCardSold()
        void_hold(order, now=now)
        return order
    # All of them, locked: the answer shows them, and they tell whether any stays valid.
    tickets = list(tickets_of(order).select_for_update(of=("self",)))
    voided = _to_void(tickets, ticket_id=ticket_id)
    if any(ticket.checked_in_at for ticket in voided) and not (even_if_checked_in and any_order):
        raise CheckedIn()
    _void(order, tickets, voided, by=by, now=now, to_gift_card=refund_to_gift_card)
    return order


def _refuse_unless_open(order: Order) -> None:
    """An order ended is not cancelled again; a group's changes through its group."""
    if order.status in (OrderStatus.CANCELLED, OrderStatus.EXPIRED):
        raise OrderCancelled()
    if order.channel == Channel.INVOICE:
        raise GroupOrder()


def _refuse_gift_card_refund(order: Order, *, by, as_buyer: bool) -> None:
    """A refund onto a gift card is for a visit's tickets, chosen by staff, or by the buyer where
    the museum offers it."""
    staff = by.has_perm(CANCEL_ANY_ORDER) and not as_buyer
    if not order.sells_visit or not (staff or settings.MUSEUM_GIFT_CARD_REFUNDS_FOR_BUYERS):
        raise InvalidInput(
            "refundToGiftCard", _("This order's refund goes back through its payments.")
        )


def _void(
    order: Order,
    tickets: list[Ticket],
    voided: list[Ticket],
    *,
    by,
    now: datetime,
    to_gift_card: bool = False,
) -> None:
    """Void the locked order's `voided` tickets (of all its `tickets`): places back, what was
    paid for them refunded, the order cancelled once none is left, audited, and a confirmed
    order's visitor mailed what it holds now."""
    voided_ids = [ticket.pk for ticket in voided]
    Ticket.objects.filter(pk__in=voided_ids).update(cancelled_at=now, cancelled_by=by)
    for ticket in voided:
        ticket.cancelled_at, ticket.cancelled_by = now, by
    # Redrawn on the next fetch, stamped CANCELLED. Only their keys are read for the deletion
    # (its signal forgets the cached copies), not the pictures.
    TicketImage.objects.filter(ticket_id__in=voided_ids).only("pk").delete()
    entries: list[AuditEntry] = []
    if order.status == OrderStatus.CONFIRMED:  # a held order was never paid
        source = RefundSource.BUYER if by.pk == order.buyer_id else RefundSource.STAFF
        refunded = refund_tickets(
            order=order, tickets=voided, source=source, by=by, to_gift_card=to_gift_card
        )
        entries.append(refunded[1])
    discounted = [(ticket.voucher_id, ticket.discount) for ticket in voided]
    vouchers.give_back(discounted, keeping=True)
    give_back(order=order, n=len(voided), member=sum(ticket.member for ticket in voided))
    vouchers.give_back(discounted, keeping=False)
    closing = _close_if_void(order, tickets, now=now)
    whole = order.status == OrderStatus.CANCELLED
    entries.append((Action.CANCELLED, order, {"tickets": voided_ids, "whole_order": whole}))
    record_each(entries=entries, by=by)  # the refunds' record and the cancellation's, at once
    if order.confirmed_at is not None:  # a hold let go was never confirmed to anyone
        mail_change(order, now=now, saving=closing)
    elif closing:
        order.save(update_fields=closing)
    order.sold_tickets = tickets


def _cancel_membership(order: Order, *, by, any_order: bool, now: datetime) -> None:
    """Cancel a membership's order (cancel_membership_order) and, through the ordinary
    cancellation, its member visits from today on that the memberships no longer admit: held
    or confirmed, places back, refunds, audit and the visitor's email. The visits are locked
    before the memberships, as every change of an order locks them."""
    sold = MembershipSale.objects.filter(order=order, cancelled_at__isnull=True)
    visits = list(
        Order.objects.select_for_update(of=("self",))
        .filter(
            membership__in=sold.values("membership_id"),
            date__gte=timezone.localdate(now),
            status__in=[OrderStatus.HELD, OrderStatus.CONFIRMED],
        )
        .order_by("pk")
    )
    memberships = cancel_membership_order(order, by=by, any_order=any_order, now=now)
    for visit in visits:
        assert visit.membership_id is not None  # a member visit, as selected
        if memberships[visit.membership_id].validity_on(visit.date) == Validity.VALID:
            continue  # a renewal cancelled: the visits its other periods cover stay
        tickets = list(tickets_of(visit).select_for_update(of=("self",)))
        # Who is already inside stays on the record; the rest of the visit is void.
        voided = [t for t in tickets if t.cancelled_at is None and t.checked_in_at is None]
        if voided:
            _void(visit, tickets, voided, by=by, now=now)


def _to_void(tickets: list[Ticket], *, ticket_id: uuid.UUID | None) -> list[Ticket]:
    """The tickets a cancellation voids: the one named (NotFound if not the order's), or all
    still valid; OrderCancelled if none is."""
    if ticket_id is not None and all(ticket.pk != ticket_id for ticket in tickets):
        raise NotFound()
    voided = [t for t in tickets if t.cancelled_at is None and ticket_id in (None, t.pk)]
    if not voided:
        raise OrderCancelled()
    return voided


def _close_if_void(order: Order, tickets: list[Ticket], *, now: datetime) -> list[str]:
    """An order whose tickets are all void is cancelled; a held one's total is what it holds,
    and what part payments took of it goes back (its buyer pays again for what it still holds).
    The fields changed, for the caller to save (with the email's, if one goes)."""
    if order.status == OrderStatus.HELD:
        pay_back_parts(order)
    if all(ticket.cancelled_at is not None for ticket in tickets):
        order.status, order.cancelled_at = OrderStatus.CANCELLED, now
        metrics.count_orders(metrics.ORDERS_CANCELLED)
        return ["status", "cancelled_at"]
    if order.status == OrderStatus.HELD:
        # Nothing is paid yet: what the order will cost is what it still holds (its
        # donations stay: a buyer's cancellation takes tickets only).
        order.total = sum((t.price for t in tickets if t.cancelled_at is None), Decimal("0"))
        order.total += sum((gift.amount for gift in donations_of(order)), Decimal("0"))
        return ["total"]
    return []


@transaction.atomic
def cancel_event(*, event_id: uuid.UUID) -> None:
    """Take the event off the programme, cancel its orders and tickets and record what is due
    back for the tickets still valid; the rows stay for the record."""
    event = locked_event(event_id)
    now = timezone.now()
    event.cancelled_at = now
    event.save(update_fields=["cancelled_at", "updated_at"])
    _close_orders_of_cancelled_event(event=event, now=now)
    Ticket.objects.filter(event=event, cancelled_at__isnull=True).update(cancelled_at=now)
    record(action=Action.CANCELLED, obj=event)
    # Redrawn on the next fetch, now stamped CANCELLED.
    TicketImage.objects.filter(ticket__event=event).delete()


def _close_orders_of_cancelled_event(*, event: SpecialEvent, now: datetime) -> int:
    """The event's orders are cancelled, and what was paid for the tickets still valid is due
    back; how many orders. Before its tickets are voided, which tells the valid ones."""
    orders = list(
        Order.objects.select_for_update()
        .filter(event=event, status__in=[OrderStatus.CONFIRMED, OrderStatus.HELD])
        .order_by("pk")
    )
    entries: list[AuditEntry] = []
    for order in orders:
        if order.status == OrderStatus.CONFIRMED:
            live = list(
                Ticket.objects.select_related("category").filter(
                    order=order, cancelled_at__isnull=True
                )
            )
            source = RefundSource.EVENT_CANCELLED
            entries.append(refund_tickets(order=order, tickets=live, source=source)[1])
            mail_change(order, now=now)
    reason = {"whole_order": True, "event_cancelled": True}
    # The refunds' records and the cancellations', in one INSERT.
    record_each(entries=entries + [(Action.CANCELLED, order, reason) for order in orders])
    cancelled = Order.objects.filter(pk__in=[order.pk for order in orders]).update(
        status=OrderStatus.CANCELLED, cancelled_at=now
    )
    metrics.count_orders(metrics.ORDERS_CANCELLED, cancelled)
    return cancelled
