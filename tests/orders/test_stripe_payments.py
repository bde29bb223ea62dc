"""Paying with Stripe, against localstripe (tests/stripe_fake.py): the service on a live server,
the buyer's browser played by the fake's `pay`, and Stripe's signed webhooks coming back to
POST /payments/stripe/webhook on loopback."""

import hashlib
import hmac
import json
import time
import urllib.request
from decimal import Decimal

import pytest
from django.core import mail

from hours.models import MuseumDay
from orders.models import Order, OrderStatus, Payment, ProviderEvent, Refund
from orders.services.holds import release_expired_holds
from tests.conftest import client_for, run_task_worker
from tests.factories import MuseumDayFactory, partner_member
from tests.orders.conftest import later, order_body
from tests.servers import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

WEBHOOK_SECRET = "whsec_museum_tests"


@pytest.fixture
def stripe_on(settings, stripe_fake, live_server):
    settings.STRIPE_SECRET_KEY = stripe_fake.api_key
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET
    settings.STRIPE_API_BASE = stripe_fake.base_url
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    stripe_fake.register_webhook(f"{live_server.url}/payments/stripe/webhook", WEBHOOK_SECRET)
    return stripe_fake


def held_order(client, day, *lines):
    answer = client.post("/v1.1/orders", order_body(day, *lines), format="json")
    assert answer.status_code == 201 and answer.json()["status"] == "held"
    return answer.json()


def start_stripe_payment(client, order_id):
    answer = client.post(f"/v1.1/orders/{order_id}/payments", {"provider": "stripe"}, format="json")
    assert answer.status_code == 201, answer.content
    payment = answer.json()
    assert payment["clientSecret"] and payment["state"] == "pending"
    return Payment.objects.get(pk=payment["paymentId"])


def payment_state(payment: Payment, *wanted: str) -> str:
    """The payment's state once Stripe's webhook moved it to one of `wanted` (it comes a moment
    after the fake's payment, on the live server's thread)."""
    wait_until(
        lambda: Payment.objects.get(pk=payment.pk).state in wanted,
        what=f"payment {payment.pk} {'/'.join(wanted)}",
    )
    return Payment.objects.get(pk=payment.pk).state


def stripe_refunds(fake, payment: Payment) -> list[int]:
    refunds = fake.client().v1.refunds.list(params={"payment_intent": payment.reference})
    return sorted(refund.amount for refund in refunds.data)


def post_signed(url: str, body: bytes, secret: str):
    """A webhook as Stripe signs it: v1 = HMAC-SHA256 of "timestamp.body" with the secret."""
    stamp = int(time.time())
    signature = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256)
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Stripe-Signature": f"t={stamp},v1={signature.hexdigest()}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_paid_order_is_confirmed_by_the_webhook_and_mailed(stripe_on, online_client):
    day = MuseumDayFactory(date=later()).date
    order = held_order(online_client, day, ("adult", 2))
    image = f"/v1.1/tickets/{order['tickets'][0]['ticketId']}/qr"
    assert online_client.post(f"/v1.1/orders/{order['orderId']}/confirm").status_code == 402
    assert online_client.get(image).json()["code"] == "not_paid"

    payment = start_stripe_payment(online_client, order["orderId"])
    stripe_on.pay(payment.reference)

    assert payment_state(payment, "confirmed") == "confirmed"
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.CONFIRMED
    assert online_client.get(image).status_code == 200
    run_task_worker()
    [email] = mail.outbox
    assert email.to == ["family@example.com"]
    listed = online_client.get(f"/v1.1/orders/{order['orderId']}/payments").json()
    assert [(p["provider"], p["state"], p["amount"]) for p in listed] == [
        ("stripe", "confirmed", 30)
    ]


def test_the_same_webhook_twice_confirms_and_mails_once(stripe_on, online_client, live_server):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 1))
    payment = start_stripe_payment(online_client, order["orderId"])
    stripe_on.pay(payment.reference)
    payment_state(payment, "confirmed")
    [event] = [
        e
        for e in stripe_on.client().v1.events.list(params={"type": "payment_intent.succeeded"})
        if e.data.object.id == payment.reference
    ]

    again = json.dumps(event.to_dict()).encode()
    url = f"{live_server.url}/payments/stripe/webhook"
    assert post_signed(url, again, WEBHOOK_SECRET) == 204

    assert ProviderEvent.objects.filter(event_id=event.id).count() == 1
    run_task_worker()
    assert len(mail.outbox) == 1


def test_a_forged_signature_is_refused_and_changes_nothing(stripe_on, online_client, live_server):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 1))
    payment = start_stripe_payment(online_client, order["orderId"])
    forged = {
        "id": "evt_forged",
        "object": "event",
        "type": "payment_intent.succeeded",
        "data": {"object": {"id": payment.reference, "object": "payment_intent"}},
    }

    url = f"{live_server.url}/payments/stripe/webhook"
    assert post_signed(url, json.dumps(forged).encode(), "whsec_not_ours") == 400

    assert Payment.objects.get(pk=payment.pk).state == "pending"
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.HELD
    assert not ProviderEvent.objects.exists()


def test_a_declined_card_leaves_the_order_held_for_another_try(stripe_on, online_client):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 1))
    payment = start_stripe_payment(online_client, order["orderId"])

    assert stripe_on.decline(payment.reference).code == "card_declined"

    assert payment_state(payment, "failed") == "failed"
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.HELD
    second = start_stripe_payment(online_client, order["orderId"])
    stripe_on.pay(second.reference)
    assert payment_state(second, "confirmed") == "confirmed"


def expire(order_id) -> None:
    Order.objects.filter(pk=order_id).update(hold_expires_at="2000-01-01T00:00:00Z")
    assert release_expired_holds() == 1


def test_a_payment_after_the_hold_ran_out_takes_the_places_again_if_free(stripe_on, online_client):
    day = MuseumDayFactory(date=later(), capacity=2)
    order = held_order(online_client, day.date, ("adult", 2))
    payment = start_stripe_payment(online_client, order["orderId"])
    expire(order["orderId"])
    assert MuseumDay.objects.get(pk=day.pk).sold == 0

    stripe_on.pay(payment.reference)

    assert payment_state(payment, "confirmed", "refunded") == "confirmed"
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.CONFIRMED
    assert MuseumDay.objects.get(pk=day.pk).sold == 2
    answer = online_client.get(f"/v1.1/orders/{order['orderId']}").json()
    assert [ticket["status"] for ticket in answer["tickets"]] == ["valid", "valid"]


def test_a_payment_after_the_places_went_is_refunded_and_the_buyer_told(stripe_on, online_client):
    day = MuseumDayFactory(date=later(), capacity=2)
    order = held_order(online_client, day.date, ("adult", 2))
    payment = start_stripe_payment(online_client, order["orderId"])
    expire(order["orderId"])
    sold = client_for(partner_member(username="reseller")).post(
        "/v1.1/orders", order_body(day.date, ("adult", 2)), format="json"
    )
    assert sold.status_code == 201

    stripe_on.pay(payment.reference)

    assert payment_state(payment, "confirmed", "refunded") == "refunded"
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.EXPIRED
    run_task_worker()
    refund = Refund.objects.get(payment=payment)
    assert (refund.state, refund.source, refund.amount) == ("done", "not_placed", Decimal(30))
    assert stripe_refunds(stripe_on, payment) == [3000]
    assert any("could not be kept" in email.subject for email in mail.outbox)


def test_cancelling_a_paid_order_refunds_through_stripe_ticket_by_ticket(stripe_on, online_client):
    order = held_order(
        online_client, MuseumDayFactory(date=later()).date, ("adult", 1), ("child", 1)
    )
    payment = start_stripe_payment(online_client, order["orderId"])
    stripe_on.pay(payment.reference)
    payment_state(payment, "confirmed")
    child = next(t for t in order["tickets"] if t["category"] == "child")
    url = f"/v1.1/orders/{order['orderId']}"

    partly = online_client.post(f"{url}/tickets/{child['ticketId']}/cancel")
    assert partly.status_code == 200 and partly.json()["refundDue"] == 7.5
    run_task_worker()
    assert stripe_refunds(stripe_on, payment) == [750]

    assert online_client.post(f"{url}/cancel").json()["status"] == "cancelled"
    run_task_worker()
    assert stripe_refunds(stripe_on, payment) == [750, 1500]
    refunds = Refund.objects.filter(payment=payment)
    assert {r.state for r in refunds} == {"done"} and sum(r.amount for r in refunds) == 22.5


def test_a_failed_refund_stays_visible_until_staff_try_it_again(
    stripe_on, online_client, desk_client, settings
):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 1))
    payment = start_stripe_payment(online_client, order["orderId"])
    stripe_on.pay(payment.reference)
    payment_state(payment, "confirmed")
    settings.STRIPE_API_BASE = "http://127.0.0.1:9"  # Stripe unreachable: nothing listens there

    assert online_client.post(f"/v1.1/orders/{order['orderId']}/cancel").status_code == 200
    run_task_worker()
    refund = Refund.objects.get(payment=payment)
    assert refund.state == "failed" and refund.error
    listed = desk_client.get("/admin/orders/refund/", {"state__exact": "failed"})
    assert refund.error.encode()[:20] in listed.content

    settings.STRIPE_API_BASE = stripe_on.base_url
    desk_client.post(
        "/admin/orders/refund/",
        {"action": "try_again", "_selected_action": [refund.pk]},
    )
    run_task_worker()
    assert Refund.objects.get(pk=refund.pk).state == "done"
    assert stripe_refunds(stripe_on, payment) == [1500]
