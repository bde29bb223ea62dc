"""Payment providers: who takes an order's money, and pays it back.

One interface, four providers: `stripe` (a card payment the buyer completes in the browser with
Stripe's client secret; Stripe's webhook confirms it), `desk` (staff record cash or a card
terminal: paid at once), `demo` (local work only: a page with "Pay" and "Decline") and
`on_account` (a sales partner's order, invoiced monthly; never started through the API).

A provider only talks to the outside: the services (orders.services.payments) decide what a
payment means for the order, under the same locks as a sale.
"""

from dataclasses import dataclass
from decimal import Decimal

import stripe
from django.conf import settings
from django.urls import reverse

from orders.models import Payment, Refund, RefundState

STRIPE = "stripe"
DESK = "desk"
DEMO = "demo"
ON_ACCOUNT = "on_account"

TAKE_DESK_PAYMENT = "orders.take_desk_payment"
SELL_AT_DESK = "orders.sell_at_desk"
# A buyer waits on the start of a payment; a worker on a refund.
STRIPE_TIMEOUT_SECONDS = 10
SELL_ON_ACCOUNT = "orders.sell_on_account"


class ProviderError(Exception):
    """The provider refused or failed the call; its message is kept for staff."""


@dataclass(frozen=True)
class Started:
    """What starting a payment gave: the provider's id for it and what the client needs."""

    reference: str = ""
    client_secret: str | None = None  # Stripe: for Stripe.js to complete the payment
    pay_url: str | None = None  # demo: the page that completes it
    paid: bool = False  # the desk: money already in hand


class Provider:
    name: str
    # Pays back without calling out (a record, or staff by hand): settled in the cancellation's
    # own transaction, with no task.
    settles_locally = False

    def offered_to(self, account) -> bool:
        raise NotImplementedError

    def start(self, payment: Payment) -> Started:
        raise NotImplementedError

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        """Pay `refund.amount` back; the refund's new state and the provider's id for it.
        Raises ProviderError."""
        raise NotImplementedError


def cents(amount: Decimal) -> int:
    """Stripe counts in the currency's smallest unit (every currency the museum prices in has
    two decimals)."""
    return int(amount * 100)


class StripeProvider(Provider):
    name = STRIPE

    def offered_to(self, account) -> bool:
        return bool(settings.STRIPE_SECRET_KEY)

    def start(self, payment: Payment) -> Started:
        intent = self._call(
            lambda stripe_api: stripe_api.payment_intents.create(
                params={
                    "amount": cents(payment.amount),
                    "currency": payment.currency.lower(),
                    "payment_method_types": ["card"],
                    "metadata": {"order": str(payment.order_id), "payment": str(payment.pk)},
                },
                # A retried start asks Stripe again and gets the same intent.
                options={"idempotency_key": f"payment-{payment.pk}"},
            )
        )
        return Started(reference=intent.id, client_secret=intent.client_secret)

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        assert refund.payment is not None
        reference = refund.payment.reference
        done = self._call(
            lambda stripe_api: stripe_api.refunds.create(
                params={"payment_intent": reference, "amount": cents(refund.amount)},
                options={"idempotency_key": f"refund-{refund.pk}"},
            )
        )
        if done.status == "failed":
            raise ProviderError(f"Stripe refund {done.id} failed")
        return RefundState.DONE, done.id

    def intent_succeeded(self, reference: str, *, amount: Decimal) -> bool:
        """Whether Stripe itself says the PaymentIntent took `amount`: a webhook's word is
        checked against the API before the order moves."""
        intent = self._call(lambda stripe_api: stripe_api.payment_intents.retrieve(reference))
        # Stripe reports what it received; a fake without that field, the amount asked.
        received = getattr(intent, "amount_received", None) or intent.amount
        return intent.status == "succeeded" and received >= cents(amount)

    @staticmethod
    def _call(request):
        """`request` made with a client of the configured key and server; its errors are the
        provider's."""
        base = {"api": settings.STRIPE_API_BASE} if settings.STRIPE_API_BASE else {}
        client = stripe.StripeClient(
            settings.STRIPE_SECRET_KEY,
            base_addresses=base,  # type: ignore[arg-type]
            http_client=stripe.RequestsClient(timeout=STRIPE_TIMEOUT_SECONDS),
        )
        try:
            return request(client.v1)
        except stripe.StripeError as exc:
            raise ProviderError(exc.user_message or str(exc)) from exc


class DeskProvider(Provider):
    """Cash or a card terminal at the front desk: staff have the money when they record it, and
    pay a refund back by hand."""

    name = DESK
    settles_locally = True

    def offered_to(self, account) -> bool:
        return account.has_perm(TAKE_DESK_PAYMENT)

    def start(self, payment: Payment) -> Started:
        return Started(paid=True)

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        return RefundState.MANUAL, ""


class DemoProvider(Provider):
    name = DEMO
    settles_locally = True

    def offered_to(self, account) -> bool:
        return settings.MUSEUM_DEMO_PAYMENTS

    def start(self, payment: Payment) -> Started:
        return Started(pay_url=reverse("demo-payment", kwargs={"payment_id": payment.pk}))

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        return RefundState.DONE, ""


class OnAccountProvider(Provider):
    """A sales partner collects the money and is invoiced monthly; a refund is a credit on the
    invoice."""

    name = ON_ACCOUNT
    settles_locally = True

    def offered_to(self, account) -> bool:
        return False  # a partner's order is paid on account when it is confirmed

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        return RefundState.DONE, ""


PROVIDERS: dict[str, Provider] = {
    provider.name: provider
    for provider in (StripeProvider(), DeskProvider(), DemoProvider(), OnAccountProvider())
}


def provider(name: str) -> Provider:
    return PROVIDERS[name]


def offered(account) -> list[str]:
    """The providers `account` may start a payment with."""
    return [name for name, p in PROVIDERS.items() if p.offered_to(account)]
