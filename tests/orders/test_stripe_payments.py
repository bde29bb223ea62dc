"""Paying with Stripe, against localstripe (tests/stripe_fake.py): the service on a live server,
the buyer's browser played by the fake's `pay`, and Stripe's signed webhooks coming back to
POST /payments/stripe/webhook on loopback."""

import datetime as dt
import hashlib
import hmac
import json
import time
import urllib.request
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from hours.models import MuseumDay
from museum.lost_work import LOST_AFTER, RETRY
from orders import refunds
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
        # The fake serves the whole session: the first page of 10 may not reach this one.
        for e in stripe_on.client().v1.events.list(
            params={"type": "payment_intent.succeeded", "limit": 100}
        )
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


def succeeded_event(fake, payment: Payment) -> dict:
    """Stripe's payment_intent.succeeded event of the payment's intent, as Stripe sends it."""
    # Up to 100 (Stripe's default page is 10): other tests' payments share the fake.
    events = fake.client().v1.events.list(params={"type": "payment_intent.succeeded", "limit": 100})
    [event] = [e for e in events if e.data.object.id == payment.reference]
    return event.to_dict()


@pytest.mark.parametrize(
    "change",
    [{"currency": "jpy"}, {"metadata": {"payment": "4f1d6c0e-0000-4000-8000-000000000000"}}],
    ids=["another currency", "another payment"],
)
def test_an_intent_changed_at_stripe_confirms_nothing(
    stripe_on, online_client, live_server, change
):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 2))
    payment = start_stripe_payment(online_client, order["orderId"])
    # The same number in yen (about a fifth of the price), or an intent naming another payment.
    stripe_on.client().v1.payment_intents.update(payment.reference, params=change)
    stripe_on.pay(payment.reference)

    body = json.dumps(succeeded_event(stripe_on, payment)).encode()
    answer = post_signed(f"{live_server.url}/payments/stripe/webhook", body, WEBHOOK_SECRET)

    assert answer == 409
    assert Payment.objects.get(pk=payment.pk).state == "pending"
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.HELD
    assert not ProviderEvent.objects.exists()  # Stripe may send it again: it is refused again


@pytest.mark.parametrize(
    "event",
    [
        [],
        {"id": "evt_1", "type": "payment_intent.succeeded"},
        {"id": "evt_1", "type": "payment_intent.succeeded", "data": {}},
        {"type": "payment_intent.succeeded", "data": {"object": {"id": "pi_1"}}},
        {"id": "evt_1", "type": "payment_intent.succeeded", "data": {"object": {"object": "x"}}},
        {"id": "evt_1", "type": "payment_intent.succeeded", "data": {"object": "pi_1"}},
    ],
    ids=["array", "no data", "no object", "no id", "object without id", "object a string"],
)
def test_a_signed_event_of_another_shape_is_a_400(stripe_on, live_server, event):
    url = f"{live_server.url}/payments/stripe/webhook"

    assert post_signed(url, json.dumps(event).encode(), WEBHOOK_SECRET) == 400
    assert post_signed(url, b"\xff{not json", WEBHOOK_SECRET) == 400
    assert not ProviderEvent.objects.exists()


def test_a_partners_order_takes_no_stripe_payment(stripe_on, day_for_partner):
    partner = client_for(partner_member(username="reseller"))
    order = partner.post(
        "/v1.1/orders", order_body(day_for_partner, ("adult", 1), hold=True), format="json"
    ).json()

    answer = partner.post(
        f"/v1.1/orders/{order['orderId']}/payments", {"provider": "stripe"}, format="json"
    )

    assert answer.status_code == 409 and answer.json()["code"] == "nothing_to_pay"
    assert not Payment.objects.exists()


@pytest.fixture
def day_for_partner(db):
    return MuseumDayFactory(date=later()).date


def stripe_payment_made_directly(fake, order: Order) -> Payment:
    """A Stripe payment of `order` as the service made them before a rule refused it: a pending
    payment and its intent at Stripe, naming it."""
    payment = Payment.objects.create(
        order=order,
        provider="stripe",
        amount=order.total,
        currency="EUR",
        state="pending",
        taken_by=order.buyer,
    )
    intent = fake.client().v1.payment_intents.create(
        params={
            "amount": int(order.total * 100),
            "currency": "eur",
            "metadata": {"order": str(order.pk), "payment": str(payment.pk)},
        }
    )
    Payment.objects.filter(pk=payment.pk).update(reference=intent.id)
    payment.refresh_from_db()
    return payment


def test_a_card_payment_of_a_partners_held_order_is_paid_back_not_a_500(stripe_on, day_for_partner):
    partner = client_for(partner_member(username="reseller"))
    held = partner.post(
        "/v1.1/orders", order_body(day_for_partner, ("adult", 2), hold=True), format="json"
    ).json()
    payment = stripe_payment_made_directly(stripe_on, Order.objects.get(pk=held["orderId"]))

    stripe_on.pay(payment.reference)

    assert payment_state(payment, "confirmed", "refunded") == "refunded"
    run_task_worker()
    refund = Refund.objects.get(payment=payment)
    assert (refund.state, refund.source, refund.amount) == ("done", "already_paid", Decimal(30))
    assert stripe_refunds(stripe_on, payment) == [3000]
    # The partner confirms the order on account, as always.
    confirmed = partner.post(f"/v1.1/orders/{held['orderId']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["status"] == "confirmed"


def test_a_card_payment_of_an_order_paid_at_the_desk_is_paid_back_and_the_buyer_told_why(
    stripe_on, online_client, staff_client
):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 2))
    paid = staff_client.post(
        f"/v1.1/orders/{order['orderId']}/payments", {"provider": "desk"}, format="json"
    )
    assert paid.status_code == 201 and paid.json()["state"] == "confirmed"
    late = stripe_payment_made_directly(stripe_on, Order.objects.get(pk=order["orderId"]))

    stripe_on.pay(late.reference)

    assert payment_state(late, "confirmed", "refunded") == "refunded"
    run_task_worker()
    assert Refund.objects.get(payment=late).source == "already_paid"
    assert stripe_refunds(stripe_on, late) == [3000]
    [told] = [email for email in mail.outbox if "paid back" in email.subject]
    assert "when the order was already paid" in told.body and "hold" not in told.body


def test_a_payment_after_the_buyer_cancelled_is_paid_back_saying_so(stripe_on, online_client):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 1))
    payment = start_stripe_payment(online_client, order["orderId"])
    assert online_client.post(f"/v1.1/orders/{order['orderId']}/cancel").status_code == 200

    stripe_on.pay(payment.reference)

    assert payment_state(payment, "confirmed", "refunded") == "refunded"
    run_task_worker()
    assert Refund.objects.get(payment=payment).source == "paid_after_cancel"
    [told] = mail.outbox
    assert "after the order was cancelled" in told.body and "hold" not in told.body


def test_a_second_start_answers_the_intent_in_progress_and_another_provider_cancels_it(
    stripe_on, online_client
):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 1))
    first = start_stripe_payment(online_client, order["orderId"])
    again = online_client.post(
        f"/v1.1/orders/{order['orderId']}/payments", {"provider": "stripe"}, format="json"
    ).json()

    assert (again["paymentId"], again["state"]) == (str(first.pk), "pending")
    assert again["clientSecret"].startswith(first.reference)
    demo = online_client.post(
        f"/v1.1/orders/{order['orderId']}/payments", {"provider": "demo"}, format="json"
    )

    assert demo.status_code == 201 and demo.json()["payUrl"]
    assert Payment.objects.get(pk=first.pk).state == "cancelled"
    assert stripe_on.client().v1.payment_intents.retrieve(first.reference).status == "canceled"
    listed = online_client.get(f"/v1.1/orders/{order['orderId']}/payments").json()
    assert [(p["provider"], p["state"]) for p in listed] == [
        ("stripe", "cancelled"),
        ("demo", "pending"),
    ]


def test_a_refund_lost_with_its_worker_is_paid_back_once_by_the_next_attempt(
    stripe_on, online_client
):
    order = held_order(online_client, MuseumDayFactory(date=later()).date, ("adult", 1))
    payment = start_stripe_payment(online_client, order["orderId"])
    stripe_on.pay(payment.reference)
    payment_state(payment, "confirmed")
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert online_client.post(f"/v1.1/orders/{order['orderId']}/cancel").status_code == 200
        refund = Refund.objects.get(payment=payment)
        # What a worker killed while calling Stripe leaves: its task running, the refund claimed.
        [lost] = DBTaskResult.objects.filter(task_path=refunds.pay_back_refund.module_path)
        lost.claim("a-worker-that-died")
        assert refunds.claim_refund(refund_id=refund.pk, attempt=1)

        assert refunds.pay_back_lost_refunds.call() == 0  # perhaps still calling
        clock.shift(LOST_AFTER + dt.timedelta(seconds=1))
        assert refunds.pay_back_lost_refunds.call() == 1
        clock.shift(RETRY.wait(1))
        run_task_worker()

    assert Refund.objects.get(pk=refund.pk).state == "done"
    assert stripe_refunds(stripe_on, payment) == [1500]
