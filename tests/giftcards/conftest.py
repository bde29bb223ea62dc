# Gift cards are bought and spent with Stripe as orders are.
from tests.orders.test_stripe_payments import stripe_on  # noqa: F401
