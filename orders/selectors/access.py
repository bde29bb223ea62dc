"""Who may see or change an order, and the order a viewer asks for or NotFound."""

import uuid
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, prefetch_related_objects
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django.utils.translation import gettext as _

from museum.exceptions import NotAllowed, NotFound
from orders.exceptions import NotPaid
from orders.models import (
    Order,
    OrderStatus,
    Refund,
    Ticket,
)

VIEW_ANY_ORDER = "orders.view_order"
CANCEL_ANY_ORDER = "orders.cancel_any_order"


def visit_starts_at(*, order: Order) -> datetime:
    """When the visit begins: the slot's entry time, else the start of the ticket's day."""
    starts = order.slot.entry_time if order.slot else time.min
    return timezone.make_aware(datetime.combine(order.date, starts))


def cancel_deadline(*, order: Order) -> datetime:
    """Until when its buyer may cancel the order (cancel_order; its PDF and email say it). A
    membership's: until its period starts (the order's date), or MUSEUM_MEMBERSHIP_CANCEL_DAYS
    after it was bought, whichever is later."""
    if order.sells_gift_cards:
        # Staff refund a gift card sold; its buyer may drop it only while it is not paid.
        return order.hold_expires_at or order.created_at
    if order.sells_memberships:
        starts = timezone.make_aware(datetime.combine(order.date, time.min))
        cooling_off = order.created_at + timedelta(days=settings.MUSEUM_MEMBERSHIP_CANCEL_DAYS)
        return max(starts, cooling_off)
    return visit_starts_at(order=order) - timedelta(hours=settings.MUSEUM_CANCEL_HOURS_BEFORE)


@dataclass(frozen=True)
class OrderAccount:
    """What an order's visitor paid for, got back and still holds, ticket by ticket: the tickets
    sold (those still valid and those cancelled since the order was confirmed, each with its
    refund), in the order of its lines (the visitor categories' order). A ticket cancelled while
    the order was held was never paid for, and is not in it."""

    valid: list[Ticket]
    cancelled: list[Ticket]

    @property
    def paid(self) -> Decimal:
        return sum((ticket.price for ticket in self.valid + self.cancelled), Decimal("0"))

    @property
    def back(self) -> Decimal:
        return sum(
            (refund.amount for ticket in self.cancelled for refund in ticket.refunds.all()),
            Decimal("0"),
        )

    @property
    def still_valid(self) -> Decimal:
        return sum((ticket.price for ticket in self.valid), Decimal("0"))


def order_account(*, order: Order) -> OrderAccount:
    tickets = sorted(
        order.tickets.select_related("category", "event", "slot").prefetch_related("refunds"),
        key=line_order,
    )
    return OrderAccount(
        valid=[ticket for ticket in tickets if ticket.cancelled_at is None],
        # Cancelled since it was confirmed: cancelling a confirmed order's ticket records its
        # refund (orders.services.payments.refund_tickets), a free one's too.
        cancelled=[t for t in tickets if t.cancelled_at is not None and _has_refund(t)],
    )


def line_order(ticket: Ticket) -> tuple:
    """Where a ticket comes among its order's: as the visitor categories are listed (adults
    first), then by its code."""
    category = ticket.category
    kind = (category.ordering, category.category) if category else (float("inf"), "")
    return (kind, ticket.confirmation_code)


def _has_refund(ticket: Ticket) -> bool:
    return bool(ticket.refunds.all())


def may_view_order(*, viewer, order: Order) -> bool:
    return viewer.pk == order.buyer_id or viewer.has_perm(VIEW_ANY_ORDER)


def tickets_of(order: Order) -> QuerySet[Ticket]:
    """The order's tickets with what its answer shows of each (category, slot), in one
    query; the services keep them on the order as `sold_tickets`."""
    return tickets_of_orders().filter(order=order)


def viewable_orders(
    *,
    viewer,
    start: date | None = None,
    end: date | None = None,
    status: str | None = None,
    code: str | None = None,
) -> QuerySet[Order]:
    """The orders `viewer` may see (their own; staff who may view any order: all), newest first,
    for visits from `start` to `end`, of `status`, with `code` as the order's or a ticket's
    confirmation code; each with its tickets as `sold_tickets` and its refunds, in two queries
    more (a page's membership orders read their lines with `with_membership_sales`)."""
    orders = Order.objects.all()
    if not viewer.has_perm(VIEW_ANY_ORDER):
        orders = orders.filter(buyer=viewer)
    if start is not None:
        orders = orders.filter(date__gte=start)
    if end is not None:
        orders = orders.filter(date__lte=end)
    if status is not None:
        orders = orders.filter(status=status)
    if code is not None:
        with_ticket = Ticket.objects.filter(order=OuterRef("pk"), confirmation_code=code)
        orders = orders.filter(Q(confirmation_code=code) | Exists(with_ticket))
    # Into the list the services keep on an order (Order.sold_tickets), which stubs see declared.
    tickets = Prefetch(
        "tickets",
        queryset=tickets_of_orders(),
        to_attr="sold_tickets",
    )
    return (
        orders.select_related("slot", "event")
        .prefetch_related(tickets, "refunds")  # type: ignore[no-redef]
        .order_by("-created_at", "-pk")
    )


def with_membership_sales(orders: list[Order]) -> list[Order]:
    """`orders`, the membership orders among them with their lines (their taxes' lines) read in
    one query, none if there are none."""
    prefetch_related_objects(
        [order for order in orders if order.sells_memberships], "membership_sales"
    )
    return orders


def tickets_of_orders() -> QuerySet[Ticket]:
    return Ticket.objects.select_related("category", "slot", "voucher")


def viewable_order(*, order_id: uuid.UUID, viewer) -> Order:
    """The order with its tickets, if `viewer` may see it; else NotFound, as for no order."""
    order = Order.objects.select_related("slot", "event").filter(pk=order_id).first()
    if order is None or not may_view_order(viewer=viewer, order=order):
        raise NotFound()
    order.sold_tickets = list(tickets_of(order))
    return order


def refuse_unless_printable(order: Order) -> None:
    """Whether the order's tickets may be printed, drawn or sent, for every face that does (the
    API's PDF and image, the desk's print and resend, the ticket's page in the admin): not those
    of an order never paid, held or with its hold run out (released yet or not), which would pass
    for paid tickets (NotPaid). A paid order's cancelled tickets are printed stamped CANCELLED.
    A membership's order has no tickets (NotFound): the membership's card admits."""
    if order.sells_memberships:
        raise NotFound(_("A membership's order has no tickets: the membership's card admits."))
    if order.sells_gift_cards:
        raise NotFound(_("A gift card's order has no tickets."))
    if order.status == OrderStatus.HELD:
        raise NotPaid()
    if order.status == OrderStatus.EXPIRED:
        raise NotPaid(_("The order's hold ran out before it was paid: it has no tickets."))
    if order.confirmed_at is None:
        raise NotPaid(_("The order was cancelled before it was paid: it has no tickets."))


def is_printable(order: Order) -> bool:
    """refuse_unless_printable as a yes or no: whether the order's tickets have images and a PDF
    to link to (its answer's `imageUrl`)."""
    try:
        refuse_unless_printable(order)
    except (NotPaid, NotFound):
        return False
    return True


def printable_order(*, order_id: uuid.UUID, viewer) -> Order:
    """The order whose tickets `viewer` asks to print: NotFound as viewable_order, NotPaid as
    refuse_unless_printable."""
    order = viewable_order(order_id=order_id, viewer=viewer)
    refuse_unless_printable(order)
    return order


# What an order's refunds come to, in the statement that reads the order. By hand: the ORM's
# Subquery(Sum) and Coalesce cost more CPU to build than the statement this saves.
_REFUNDED = RawSQL(
    f'SELECT COALESCE(SUM("amount"), 0) FROM "{Refund._meta.db_table}" '
    f'WHERE "order_id" = "{Order._meta.db_table}"."id"',
    (),
    output_field=Order._meta.get_field("total"),
)


def order_to_change(*, order_id: uuid.UUID, by) -> Order:
    """The order's row, locked, with its slot and what its refunds come to (`refunded`, which
    the refunds a change makes add to: orders.refunds.record_refunds), if `by` may change it;
    NotFound for those who may not see it. Every refund is written under this lock, so its
    answer's refundDue needs no read after the commit."""
    order = (
        Order.objects.select_related("slot", "event")
        .select_for_update(of=("self",))
        .annotate(refunded=_REFUNDED)  # type: ignore[no-redef]  # declared on Order: services set it
        .filter(pk=order_id)
        .first()
    )
    if order is None or not may_view_order(viewer=by, order=order):
        raise NotFound()
    if by.pk != order.buyer_id and not by.has_perm(CANCEL_ANY_ORDER):
        raise NotAllowed("Only the buyer or staff may change an order.")
    return order
