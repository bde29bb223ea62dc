"""Payment providers: who takes an order's money, and pays it back. One interface
(`base.Provider`), a module per provider:

- `stripe`: a card payment the buyer completes in the browser; Stripe's webhook says how it went;
- `at_desk`: staff record cash or a card terminal's payment: paid at once;
- `demo`: local work only, a page with "Pay" and "Decline";
- `on_account`: a sales partner's order, invoiced monthly; never started through the API.

An app above the sale adds its own with `register` from its AppConfig.ready (the giftcards
app's `giftcard`).

What a provider calls (Stripe's webhook, the demo page) is in `views`, a thin face over
orders.services.payments.
"""

from orders.providers.at_desk import DESK, SELL_AT_DESK, TAKE_DESK_PAYMENT, DeskProvider
from orders.providers.base import Provider
from orders.providers.demo import DEMO, DemoProvider
from orders.providers.on_account import ON_ACCOUNT, SELL_ON_ACCOUNT, OnAccountProvider
from orders.providers.stripe import STRIPE, StripeProvider

__all__ = [
    "DEMO",
    "DESK",
    "ON_ACCOUNT",
    "SELL_AT_DESK",
    "SELL_ON_ACCOUNT",
    "STRIPE",
    "TAKE_DESK_PAYMENT",
    "offered",
    "provider",
    "register",
]

PROVIDERS: dict[str, Provider] = {
    provider.name: provider
    for provider in (StripeProvider(), DeskProvider(), DemoProvider(), OnAccountProvider())
}


def register(provider: Provider) -> None:
    PROVIDERS[provider.name] = provider


def provider(name: str) -> Provider:
    return PROVIDERS[name]


def offered(account) -> list[str]:
    """The providers `account` may start a payment with."""
    return [name for name, p in PROVIDERS.items() if p.offered_to(account)]
