"""What the sale tells the apps above it, which it may not import (docs/architecture.md): sent
inside the transaction of the change, so a receiver's writes commit or roll back with it."""

from django.dispatch import Signal

# An order became confirmed (paid in full, on account, or free): sender Order, `order`.
order_confirmed = Signal()

# Refunds of an order are to go onto a new gift card rather than back through their payments:
# sender Order, `order`, `refunds` (saved, state GIFT_CARD), `by`. A receiver issues the card and
# names it in each refund's `reference`; none means none is issued (RefundNotIssued).
refunds_to_gift_card = Signal()

# Places were given back (a hold ran out, an order or a group's visit was cancelled or moved):
# sender None, `day`, `slot_id`, `event_id`, `n`. A drop gives them to its line or its waiting
# list once the change commits.
places_given_back = Signal()
