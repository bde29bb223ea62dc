"""Reads of orders: who may see one, and the order a viewer asks for or NotFound."""

import uuid

from rest_framework.exceptions import NotFound

from orders.models import Order

VIEW_ANY_ORDER = "orders.view_order"


def may_view_order(*, viewer, order: Order) -> bool:
    return viewer.pk == order.buyer_id or viewer.has_perm(VIEW_ANY_ORDER)


def viewable_order(*, order_id: uuid.UUID, viewer) -> Order:
    """The order with its tickets, if `viewer` may see it; else 404, as for no order."""
    order = (
        Order.objects.select_related("slot", "event")
        .prefetch_related("tickets__category", "tickets__slot", "refunds")
        .filter(pk=order_id)
        .first()
    )
    if order is None or not may_view_order(viewer=viewer, order=order):
        raise NotFound()
    return order
