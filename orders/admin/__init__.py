"""The sale's admin, by concern: orders, their tickets, payments, refunds, categories and the
sales report (`sales`), memberships with their report (`memberships`), receipts, invoices and
credit notes (`documents`), and funds, donations and their report (`donations`). Django's admin
reads this package; importing each module registers its pages."""

from orders.admin import documents, donations, memberships, sales  # noqa: F401
