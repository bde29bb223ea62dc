"""Reads of orders: who may see one, and the order a viewer asks for or NotFound."""

import uuid

from django.db.models import QuerySet
from rest_framework.exceptions import NotFound

from orders.models import Order
from tickets.models import Ticket

VIEW_ANY_ORDER = "orders.view_order"


def may_view_order(*, viewer, order: Order) -> bool:
    return viewer.pk == order.buyer_id or viewer.has_perm(VIEW_ANY_ORDER)


def tickets_of(order: Order) -> QuerySet[Ticket]:
    """The order's tickets with what its answer shows of each (category, slot, refund), in one
    query; the services keep them on the order as `sold_tickets`."""
    return Ticket.objects.filter(order=order).select_related("category", "slot", "refund")


def viewable_order(*, order_id: uuid.UUID, viewer) -> Order:
    """The order with its tickets, if `viewer` may see it; else 404, as for no order."""
    order = Order.objects.select_related("slot").filter(pk=order_id).first()
    if order is None or not may_view_order(viewer=viewer, order=order):
        raise NotFound()
    order.sold_tickets = list(tickets_of(order))
    return order
