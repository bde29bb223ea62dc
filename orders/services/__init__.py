"""The sale, in rooms by job: `pricing` (visitor categories and prices), `places` (counting a
sale's places on its rows), `sale` (placing an order), `limits` (places one may take), `holds`,
`payments`, `cancellation` and `personal_data`. The names below are the services the faces call."""

from orders.selectors import cancel_deadline, visit_starts_at
from orders.services.cancellation import cancel_event, cancel_order
from orders.services.holds import confirm_order, release_expired_holds
from orders.services.payments import (
    payment_failed,
    payment_succeeded,
    payments_of,
    retry_refund,
    start_payment,
)
from orders.services.personal_data import anonymise_old_orders
from orders.services.pricing import (
    DEFAULT_CATEGORY,
    active_categories,
    category_price,
    price_list,
)
from orders.services.sale import buy_ticket, place_order, quote_order

__all__ = [
    "DEFAULT_CATEGORY",
    "active_categories",
    "anonymise_old_orders",
    "buy_ticket",
    "cancel_deadline",
    "cancel_event",
    "cancel_order",
    "category_price",
    "confirm_order",
    "payment_failed",
    "payment_succeeded",
    "payments_of",
    "place_order",
    "price_list",
    "quote_order",
    "release_expired_holds",
    "retry_refund",
    "start_payment",
    "visit_starts_at",
]
