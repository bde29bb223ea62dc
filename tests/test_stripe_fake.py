"""The Stripe fake end to end through the stripe library: intents paid and declined, webhooks
verified as the service will verify them, refunds."""

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import stripe

from tests.stripe_fake import CARD_3D_SECURE, StripeFake

SECRET = "whsec_tests"


@dataclass
class Webhooks:
    url: str
    deliveries: "queue.Queue[tuple[bytes, str]]" = field(default_factory=queue.Queue)

    def event_about(self, object_id: str, timeout: float = 10) -> stripe.Event:
        """The next event about `object_id`, its signature verified (a test's events may come
        after the next test's endpoint replaced its own: they are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            payload, signature = self.deliveries.get(timeout=max(deadline - time.monotonic(), 0))
            event = stripe.Webhook.construct_event(payload, signature, SECRET)
            if event.data.object.id == object_id:
                with pytest.raises(stripe.SignatureVerificationError):
                    stripe.Webhook.construct_event(payload, signature, "whsec_other")
                return event


@pytest.fixture
def webhooks(stripe_fake: StripeFake) -> Iterator[Webhooks]:
    """A loopback endpoint that keeps every delivery, registered with the fake."""

    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            payload = self.rfile.read(int(self.headers["Content-Length"]))
            received.deliveries.put((payload, self.headers["Stripe-Signature"]))
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    received = Webhooks(f"http://127.0.0.1:{server.server_address[1]}/stripe")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stripe_fake.register_webhook(received.url, SECRET)
    yield received
    server.shutdown()
    server.server_close()


def new_intent(client: stripe.StripeClient, amount: int = 1500) -> stripe.PaymentIntent:
    return client.v1.payment_intents.create(
        params={
            "amount": amount,
            "currency": "eur",
            "metadata": {"order": "42"},
            "payment_method_types": ["card"],
        }
    )


def test_a_paid_intent_succeeds_and_a_signed_webhook_says_so(stripe_fake, webhooks):
    client = stripe_fake.client()
    intent = new_intent(client)
    assert intent.status == "requires_payment_method"

    assert stripe_fake.pay(intent.id).status == "succeeded"
    assert stripe_fake.pay(new_intent(client).id, CARD_3D_SECURE).status == "succeeded"

    paid = client.v1.payment_intents.retrieve(intent.id)
    assert (paid.status, paid.amount, paid.currency) == ("succeeded", 1500, "eur")
    event = webhooks.event_about(intent.id)
    assert event.type == "payment_intent.succeeded"
    assert event.data.object.status == "succeeded"
    assert event.data.object.metadata["order"] == "42"


def test_a_declined_card_leaves_the_intent_unpaid_and_a_webhook_says_so(stripe_fake, webhooks):
    client = stripe_fake.client()
    intent = new_intent(client)

    assert stripe_fake.decline(intent.id).code == "card_declined"

    unpaid = client.v1.payment_intents.retrieve(intent.id)
    assert unpaid.status == "requires_payment_method"
    assert unpaid.last_payment_error and unpaid.last_payment_error.code == "card_declined"
    assert webhooks.event_about(intent.id).type == "payment_intent.payment_failed"
    with pytest.raises(stripe.InvalidRequestError, match="Cannot refund a failed payment"):
        client.v1.refunds.create(params={"payment_intent": intent.id})


def test_refunds_in_part_and_in_full(stripe_fake):
    client = stripe_fake.client()
    in_parts, in_full = new_intent(client), new_intent(client)
    stripe_fake.pay(in_parts.id)
    stripe_fake.pay(in_full.id)

    for amount in (500, 1000):
        refund = client.v1.refunds.create(params={"payment_intent": in_parts.id, "amount": amount})
        assert (refund.status, refund.amount, refund.currency) == ("succeeded", amount, "eur")
    assert client.v1.refunds.create(params={"payment_intent": in_full.id}).amount == 1500

    for intent in (in_parts, in_full):
        refunds = client.v1.refunds.list(params={"payment_intent": intent.id})
        assert sum(refund.amount for refund in refunds.data) == 1500
