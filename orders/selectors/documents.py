"""An order's receipts, invoices and credit notes, for whoever may see the order."""

import uuid

from django.db.models import QuerySet

from museum.exceptions import NotFound
from orders.models import Order, SaleDocument

from .access import may_view_order


def _viewable_order_id(*, order_id: uuid.UUID, viewer) -> uuid.UUID:
    order = Order.objects.only("pk", "buyer_id").filter(pk=order_id).first()
    if order is None or not may_view_order(viewer=viewer, order=order):
        raise NotFound()
    return order.pk


def documents_of(order_id: uuid.UUID) -> QuerySet[SaleDocument]:
    """The order's documents in the order they were issued, without their PDFs."""
    return (
        SaleDocument.objects.filter(order_id=order_id)
        .select_related("corrects", "replaces")
        .defer("pdf", "corrects__pdf", "replaces__pdf")
        .order_by("issued_at", "pk")
    )


def viewable_documents(*, order_id: uuid.UUID, viewer) -> list[SaleDocument]:
    """The order's documents, if `viewer` may see the order (as viewable_order); else
    NotFound."""
    return list(documents_of(_viewable_order_id(order_id=order_id, viewer=viewer)))


def viewable_document(*, order_id: uuid.UUID, number: str, viewer) -> SaleDocument:
    """One of the order's documents by its number, with its PDF if made, if `viewer` may see the
    order; else NotFound, as for a number the order does not have."""
    order_id = _viewable_order_id(order_id=order_id, viewer=viewer)
    document = (
        SaleDocument.objects.select_related("order", "corrects", "replaces")
        .defer("corrects__pdf", "replaces__pdf")
        .filter(order_id=order_id, number=number)
        .first()
    )
    if document is None:
        raise NotFound()
    return document
