"""Stripe: a card payment the buyer completes in the browser with Stripe.js and the intent's client
secret; Stripe's signed webhook says how it went, and the intent is read back before the order
moves (pretix `plugins/stripe`)."""

import json
from collections.abc import Mapping
from decimal import Decimal

import stripe
from django.conf import settings

from museum.exceptions import NotFound
from orders.exceptions import BadNotification, BadSignature
from orders.models import Payment, Refund, RefundState
from orders.providers.base import Notification, Provider, ProviderError, Received, Started

STRIPE = "stripe"
# A buyer waits on the start of a payment; a worker on a refund.
STRIPE_TIMEOUT_SECONDS = 10
# The events that move a payment; Stripe sends others too if the endpoint asks for them.
SUCCEEDED = "payment_intent.succeeded"
FAILED = "payment_intent.payment_failed"


def cents(amount: Decimal) -> int:
    """Stripe counts in the currency's smallest unit (every currency the museum prices in has
    two decimals)."""
    return int(amount * 100)


class StripeProvider(Provider):
    name = STRIPE

    def offered_to(self, account) -> bool:
        return bool(settings.STRIPE_SECRET_KEY)

    def start(self, payment: Payment) -> Started:
        if payment.reference:
            intent = self._call(lambda api: api.payment_intents.retrieve(payment.reference))
            return Started(reference=intent.id, client_secret=intent.client_secret)
        intent = self._call(
            lambda api: api.payment_intents.create(
                params={
                    "amount": cents(payment.amount),
                    "currency": payment.currency.lower(),
                    "payment_method_types": ["card"],
                    "metadata": {"order": str(payment.order_id), "payment": str(payment.pk)},
                },
                # A start retried before its answer was kept asks Stripe again and gets the
                # same intent.
                options={"idempotency_key": f"payment-{payment.pk}"},
            )
        )
        return Started(reference=intent.id, client_secret=intent.client_secret)

    def cancel(self, payment: Payment) -> None:
        # Stripe refuses to cancel an intent that succeeded or is processing: the webhook then
        # says how it went.
        if payment.reference:
            self._call(lambda api: api.payment_intents.cancel(payment.reference))

    def handle_notification(
        self, *, body: bytes, headers: Mapping[str, str]
    ) -> Notification | None:
        if not settings.STRIPE_SECRET_KEY:
            raise NotFound()
        try:
            stripe.WebhookSignature.verify_header(
                body, headers.get("Stripe-Signature", ""), settings.STRIPE_WEBHOOK_SECRET
            )
        except (ValueError, stripe.SignatureVerificationError):
            raise BadSignature() from None
        event_id, event_type, intent = _event(body)
        if event_type not in (SUCCEEDED, FAILED):
            return None
        reference = intent.get("id")
        if not isinstance(reference, str) or not reference:
            raise BadNotification()
        if event_type == SUCCEEDED:
            return Notification(event_id=event_id, reference=reference, succeeded=True)
        error = intent.get("last_payment_error")
        message = error.get("message") if isinstance(error, dict) else None
        return Notification(
            event_id=event_id,
            reference=reference,
            succeeded=False,
            message=message if isinstance(message, str) and message else "declined",
        )

    def read_back(self, payment: Payment) -> Received:
        retrieved = self._call(lambda api: api.payment_intents.retrieve(payment.reference))
        intent = retrieved.to_dict()
        return Received(
            succeeded=intent.get("status") == "succeeded",
            # What Stripe took: what it was asked is no proof (no fallback to `amount`).
            amount=Decimal(intent.get("amount_received") or 0) / 100,
            currency=str(intent.get("currency", "")).upper(),
            payment_id=str((intent.get("metadata") or {}).get("payment", "")),
        )

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        assert refund.payment is not None
        reference = refund.payment.reference
        done = self._call(
            lambda api: api.refunds.create(
                params={"payment_intent": reference, "amount": cents(refund.amount)},
                options={"idempotency_key": f"refund-{refund.pk}"},
            )
        )
        if done.status == "failed":
            raise ProviderError(f"Stripe refund {done.id} failed")
        return RefundState.DONE, done.id

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


def _event(body: bytes) -> tuple[str, str, dict]:
    """A Stripe event's id, type and object, or BadNotification: a signed body is Stripe's, but
    its shape is still checked before anything reads it."""
    try:
        event = json.loads(body)
    except ValueError:
        raise BadNotification() from None
    if not isinstance(event, dict):
        raise BadNotification()
    data = event.get("data")
    event_id, event_type = event.get("id"), event.get("type")
    intent = data.get("object") if isinstance(data, dict) else None
    if not (isinstance(event_id, str) and event_id and isinstance(event_type, str)):
        raise BadNotification()
    if not isinstance(intent, dict):
        raise BadNotification()
    return event_id, event_type, intent
