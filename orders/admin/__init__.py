"""The sale's admin, by concern: orders, their tickets, payments, refunds, categories and the
sales report (`sales`), and memberships with their report (`memberships`). Django's admin reads
this package; importing each module registers its pages."""

from orders.admin import memberships, sales  # noqa: F401
