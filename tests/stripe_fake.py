"""localstripe, a stateful fake of Stripe's API that sends signed webhooks, for the payment tests.

`stripe_fake` (session-scoped, registered in tests/conftest.py) is one localstripe process on a
free loopback port for the whole run. Point the stripe library at its `base_url` (or take its
`client()`), register where its webhooks go with `register_webhook`, and act as the buyer's
browser with `pay` and `decline`. Its state lasts the session: `flush()` forgets every object
(not the webhook endpoints).

localstripe 1.15.10, as the stripe library meets it:
- a PaymentIntent's `latest_charge` is the whole Charge, not its id;
- confirm takes no `payment_method` (a 500): set it on the intent first, as `pay` does;
- the intent's create refuses what it does not know (`automatic_payment_methods`, `description`:
  400 "Unexpected ..."), and keeps no `payment_method_types`;
- its payment events are payment_intent.succeeded and payment_intent.payment_failed alone (none
  for refunds, cancels, or 3-D Secure asked or failed);
- webhooks go once, a second after the event, to every endpoint, with no retry;
- idempotency keys are ignored, and a refund is never capped at what is left of the charge.
"""

import datetime as dt
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import stripe

from tests.servers import free_port, wait_until

# Stripe's test cards that localstripe knows (localstripe/resources.py, PaymentMethod).
CARD_SUCCEEDS = "4242424242424242"
# Every charge declined (card_declined). Stripe's generic decline, 4000000000000002, is declined
# by localstripe only when attached to a customer: an intent paid with it succeeds.
CARD_DECLINED = "4000000000000341"
# Asks for 3-D Secure (status requires_action), then succeeds.
CARD_3D_SECURE = "4000002500003155"

# localstripe's intents have no `amount_received`, what Stripe says it took (the amount of the
# charge that succeeded, 0 before): the launcher adds it, as Stripe reports it.
# localstripe's own command listens on every interface and keeps its objects in one pickle file
# in /tmp for every run on the machine (read at start without --from-scratch, rewritten on each
# write, a 500 for a user who does not own it). Its app, served here, listens on loopback alone
# and keeps them in memory. Webhook deliveries are logged at INFO.
LAUNCHER = """
import logging, sys
from aiohttp import web
from localstripe import resources, server
resources.Store.dump_to_disk = lambda store: None
def amount_received(intent):
    charge = intent.latest_charge
    return charge.amount if charge is not None and charge.status == "succeeded" else 0
resources.PaymentIntent.amount_received = property(amount_received)
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
web.run_app(server.app, host="127.0.0.1", port=int(sys.argv[1]), print=None)
"""


@dataclass(frozen=True)
class StripeFake:
    base_url: str
    # localstripe takes any secret key that starts with sk_.
    api_key: str = "sk_test_localstripe"
    publishable_key: str = "pk_test_localstripe"

    def client(self) -> stripe.StripeClient:
        return stripe.StripeClient(
            self.api_key, base_addresses={"api": self.base_url}, max_network_retries=0
        )

    def register_webhook(
        self, url: str, secret: str, *, events: Sequence[str] | None = None, name: str = "tests"
    ) -> None:
        """Every event (or those of `events`) is posted to `url`, signed with `secret`. One
        endpoint per `name`: registering the same name again replaces it."""
        body: dict[str, object] = {"url": url, "secret": secret}
        if events is not None:
            body["events"] = list(events)
        self._send("POST", f"/_config/webhooks/{name}", body)

    def flush(self) -> None:
        self._send("DELETE", "/_config/data")

    def pay(self, payment_intent: str, card: str = CARD_SUCCEEDS) -> stripe.PaymentIntent:
        """What the buyer's browser does: the card as the intent's payment method, the intent
        confirmed, and 3-D Secure passed if the card asks for it. A declined card raises
        stripe.CardError, as Stripe answers a confirmation."""
        client = self.client()
        expiry = dt.date.today().year + 3
        method = client.v1.payment_methods.create(
            params={
                "type": "card",
                "card": {"number": card, "exp_month": 12, "exp_year": expiry, "cvc": "123"},
            }
        )
        client.v1.payment_intents.update(payment_intent, params={"payment_method": method.id})
        intent = client.v1.payment_intents.confirm(payment_intent)
        if intent.status == "requires_action":
            # The 3-D Secure window's "Complete authentication", as localstripe's Stripe.js
            # sends it: with the publishable key and the intent's client secret.
            body = {"key": self.publishable_key, "client_secret": intent.client_secret}
            path = f"/v1/payment_intents/{payment_intent}/_authenticate?success=true"
            self._send("POST", path, body, secret_key=False)
            intent = client.v1.payment_intents.retrieve(payment_intent)
        return intent

    def decline(self, payment_intent: str) -> stripe.CardError:
        """`pay` with a card whose charge is declined: the error the confirmation raised."""
        try:
            self.pay(payment_intent, CARD_DECLINED)
        except stripe.CardError as error:
            return error
        raise AssertionError(f"{payment_intent} was paid with a declined card")

    def _send(
        self, method: str, path: str, body: object = None, *, secret_key: bool = True
    ) -> None:
        headers = {"Content-Type": "application/json"}
        if secret_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path, data=data, headers=headers, method=method
        )
        with urllib.request.urlopen(request, timeout=10):
            pass


@contextmanager
def running_localstripe(log: Path) -> Iterator[StripeFake]:
    port = free_port()
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, str(port)], stdout=output, stderr=subprocess.STDOUT
        )
    fake = StripeFake(f"http://127.0.0.1:{port}")

    def answers() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"localstripe exited with {process.returncode}; see {log}")
        try:
            fake._send("GET", "/v1/payment_intents?limit=1")
        except (urllib.error.URLError, OSError):
            return False
        return True

    try:
        wait_until(answers, what=f"localstripe on {port}")
        yield fake
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def stripe_fake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StripeFake]:
    with running_localstripe(tmp_path_factory.mktemp("localstripe") / "localstripe.log") as fake:
        yield fake
