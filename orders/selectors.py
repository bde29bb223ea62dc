"""Reads of orders: who may see or change one, and the order a viewer asks for or NotFound."""

import uuid

from django.db.models import QuerySet

from museum.exceptions import NotAllowed, NotFound
from orders.models import Order
from tickets.models import Ticket

VIEW_ANY_ORDER = "orders.view_order"
CANCEL_ANY_ORDER = "orders.cancel_any_order"


def may_view_order(*, viewer, order: Order) -> bool:
    return viewer.pk == order.buyer_id or viewer.has_perm(VIEW_ANY_ORDER)


def tickets_of(order: Order) -> QuerySet[Ticket]:
    """The order's tickets with what its answer shows of each (category, slot, refund), in one
    query; the services keep them on the order as `sold_tickets`."""
    return Ticket.objects.filter(order=order).select_related("category", "slot", "refund")


def viewable_order(*, order_id: uuid.UUID, viewer) -> Order:
    """The order with its tickets, if `viewer` may see it; else NotFound, as for no order."""
    order = Order.objects.select_related("slot").filter(pk=order_id).first()
    if order is None or not may_view_order(viewer=viewer, order=order):
        raise NotFound()
    order.sold_tickets = list(tickets_of(order))
    return order


def order_to_change(*, order_id: uuid.UUID, by) -> Order:
    """The order's row, locked, with its slot, if `by` may change it; NotFound for those who may
    not see it."""
    order = (
        Order.objects.select_related("slot")
        .select_for_update(of=("self",))
        .filter(pk=order_id)
        .first()
    )
    if order is None or not may_view_order(viewer=by, order=order):
        raise NotFound()
    if by.pk != order.buyer_id and not by.has_perm(CANCEL_ANY_ORDER):
        raise NotAllowed("Only the buyer or staff may change an order.")
    return order
