"""The sale's models, by concern: what is sold (`catalogue`), the order and its lines (`sale`),
the money in and out of it (`payments`), memberships (`memberships`), what the limits count
(`limits`), the documents kept for it (`documents`) and its receipts, invoices and credit notes
(`invoicing`). Every other module imports them from here, so a model may move between rooms
without its importers knowing.

The sale is what a visitor buys in one go, an order of tickets, each for a visitor category at
its price, with its payments, refunds and the documents kept for it. It sells general entry
(hours) and event dates (events) alike; `tickets`, the layer above, admits the holders.
"""

from .catalogue import MEMBER_CATEGORY, MembershipType, VisitorCategory
from .documents import TicketImage, TicketsPdf
from .donations import Donation, Fund
from .fees import Fee
from .invoicing import DocumentKind, NumberSeries, SaleDocument
from .limits import BuyerEmail, SaleLimits
from .memberships import (
    MemberEntry,
    Membership,
    MembershipCard,
    MembershipStatus,
    ReplacedCard,
    Validity,
)
from .payments import (
    Payment,
    PaymentState,
    ProviderEvent,
    Refund,
    RefundSource,
    RefundState,
)
from .sale import (
    ANONYMISED_EMAIL,
    Channel,
    MembershipSale,
    MembershipSaleKind,
    Order,
    OrderKind,
    OrderStatus,
    Ticket,
    TicketState,
    TicketType,
)
from .vouchers import Voucher, VoucherChannel, VoucherEffect

__all__ = [
    "VoucherEffect",
    "VoucherChannel",
    "Voucher",
    "Fund",
    "Donation",
    "Fee",
    "ANONYMISED_EMAIL",
    "MEMBER_CATEGORY",
    "BuyerEmail",
    "Channel",
    "DocumentKind",
    "MemberEntry",
    "Membership",
    "MembershipCard",
    "MembershipSale",
    "MembershipSaleKind",
    "MembershipStatus",
    "MembershipType",
    "NumberSeries",
    "Order",
    "OrderKind",
    "OrderStatus",
    "Payment",
    "PaymentState",
    "ProviderEvent",
    "Refund",
    "RefundSource",
    "RefundState",
    "ReplacedCard",
    "SaleDocument",
    "SaleLimits",
    "Ticket",
    "TicketImage",
    "TicketState",
    "TicketType",
    "TicketsPdf",
    "Validity",
    "VisitorCategory",
]
