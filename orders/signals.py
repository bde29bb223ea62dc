"""What the sale tells the apps above it, which it may not import (docs/architecture.md): sent
inside the transaction of the change, so a receiver's writes commit or roll back with it."""

from django.dispatch import Signal

# An order became confirmed (paid in full, on account, or free): sender Order, `order`.
order_confirmed = Signal()
