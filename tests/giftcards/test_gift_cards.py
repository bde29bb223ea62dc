"""Gift cards: sold as an order of their own, issued when it is paid, spent as a payment of
another order (part of it, the rest by card), paid back onto the card by its refunds; the
balance always the sum of the card's ledger, and an order's paid and paid back always the sums of
its payments and refunds."""

from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from giftcards.models import GiftCard, Transaction
from orders.models import Order, OrderStatus, Payment, Refund, SaleDocument
from orders.services.holds import release_expired_holds
from tests.conftest import assert_problem, client_for, run_task_worker
from tests.factories import SpecialEventFactory, UserFactory
from tests.orders.conftest import later, order_body
from tests.orders.test_stripe_payments import (
    payment_state,
    start_stripe_payment,
    stripe_refunds,
)

CARDS = "/v1.1/gift-cards"


def buy_card(client, amount=50, **extra) -> dict:
    answer = client.post(
        CARDS, {"amount": amount, "email": "giver@example.com", **extra}, format="json"
    )
    assert answer.status_code == 201, answer.content
    return answer.json()


def pay_with_card(client, order_id, code):
    return client.post(
        f"/v1.1/orders/{order_id}/payments", {"provider": "giftcard", "code": code}, format="json"
    )


def event_order_of_70(client) -> dict:
    event = SpecialEventFactory(price=Decimal("35"), dates=[later()])
    body = order_body(later(), ("adult", 2), ticketType="event", eventId=str(event.pk))
    answer = client.post("/v1.1/orders", body, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["total"] == 70
    return answer.json()


def assert_ledgers_add_up():
    for order in Order.objects.all():
        confirmed = order.payments.filter(state="confirmed").aggregate(s=Sum("amount"))["s"]
        refunded = order.refunds.aggregate(s=Sum("amount"))["s"]
        assert order.paid == (confirmed or 0) and order.paid_back == (refunded or 0), order
    for card in GiftCard.objects.all():
        assert card.balance() == sum(t.amount for t in Transaction.objects.filter(card=card))
        assert card.balance() >= 0


def test_a_partners_card_is_issued_at_once_and_its_code_shown(visitor_client):
    card = buy_card(visitor_client, amount=25)

    assert card["status"] == "active" and card["balance"] == 25 and card["value"] == 25
    assert len(card["code"].replace("-", "")) == 16
    assert card["order"]["ticketType"] == "giftcard" and card["order"]["status"] == "confirmed"
    # Sold untaxed: what it later pays for carries the tax.
    assert card["order"]["taxes"] == [{"rate": 0, "net": 25, "tax": 0, "gross": 25}]
    assert [t["kind"] for t in card["transactions"]] == ["issued"]
    # Any account asks what a code holds, in any case and without its hyphens.
    typed = card["code"].replace("-", "").lower()
    balance = client_for(UserFactory()).post(f"{CARDS}/balance", {"code": typed}, format="json")
    assert balance.status_code == 200 and balance.json()["balance"] == 25


@pytest.mark.parametrize("amount", [4, 501, 10.005])
def test_a_card_is_sold_between_the_least_and_most_amounts(visitor_client, amount):
    answer = visitor_client.post(CARDS, {"amount": amount, "email": "a@example.com"}, format="json")
    assert assert_problem(answer, 400)


def test_an_unpaid_cards_code_and_an_unknown_one_get_the_same_answer(online_client, settings):
    pending = buy_card(online_client)
    assert pending["status"] == "pending" and pending["code"] is None
    unpaid = GiftCard.objects.get(pk=pending["giftCardId"]).code

    answers = [
        online_client.post(f"{CARDS}/balance", {"code": code}, format="json")
        for code in (unpaid, "AAAA-BBBB-CCCC-DDDD", "not a code")
    ]

    assert [a.status_code for a in answers] == [404, 404, 404]
    assert len({a.json()["detail"] for a in answers}) == 1


def test_the_balance_lookup_is_rate_limited(visitor_client, settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**rates, "giftcard": "3/min"},
    }
    code = buy_card(visitor_client)["code"]
    statuses = [
        visitor_client.post(f"{CARDS}/balance", {"code": code}, format="json").status_code
        for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]


def test_a_gift_card_does_not_buy_a_gift_card(visitor_client, online_client):
    code = buy_card(visitor_client)["code"]
    another = buy_card(online_client)

    answer = pay_with_card(online_client, another["orderId"], code)

    assert assert_problem(answer, 409)["code"] == "gift_card_for_gift_card"
    assert GiftCard.objects.get(code=code).balance() == 50


def test_a_card_pays_part_and_the_order_waits_held_for_the_rest(visitor_client, online_client):
    code = buy_card(visitor_client)["code"]
    order = event_order_of_70(online_client)

    paid = pay_with_card(online_client, order["orderId"], code)

    assert paid.status_code == 201, paid.content
    assert paid.json()["state"] == "confirmed" and paid.json()["amount"] == 50
    held = Order.objects.get(pk=order["orderId"])
    assert held.status == OrderStatus.HELD and held.due == 20 and not held.paid_in_full()
    assert online_client.get(f"/v1.1/orders/{order['orderId']}").json()["status"] == "held"
    # The card is empty now: another payment with it is refused.
    again = pay_with_card(online_client, order["orderId"], code)
    assert assert_problem(again, 409)["code"] == "insufficient_balance"
    assert_ledgers_add_up()


def test_a_hold_that_runs_out_puts_the_cards_part_back_on_it(visitor_client, online_client):
    code = buy_card(visitor_client)["code"]
    order = event_order_of_70(online_client)
    assert pay_with_card(online_client, order["orderId"], code).status_code == 201
    Order.objects.filter(pk=order["orderId"]).update(hold_expires_at=timezone.now())

    release_expired_holds()

    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.EXPIRED
    card = GiftCard.objects.get(code=code)
    assert card.balance() == 50
    assert [t.kind for t in card.transactions.order_by("pk")] == ["issued", "redeemed", "credited"]
    [refund] = Refund.objects.filter(order_id=order["orderId"])
    assert refund.state == "done" and refund.source == "unpaid_hold"
    assert_ledgers_add_up()


def test_cancelling_a_held_order_puts_the_cards_part_back(visitor_client, online_client):
    code = buy_card(visitor_client)["code"]
    order = event_order_of_70(online_client)
    assert pay_with_card(online_client, order["orderId"], code).status_code == 201

    cancelled = online_client.post(f"/v1.1/orders/{order['orderId']}/cancel")

    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert GiftCard.objects.get(code=code).balance() == 50
    assert_ledgers_add_up()


@pytest.mark.django_db(transaction=True)
def test_card_and_stripe_pay_one_order_and_a_cancellation_pays_each_back(
    stripe_on, visitor_client, online_client
):
    """€50 on a gift card, €20 by Stripe of a €70 order, confirmed only once both are paid;
    cancelled, the €20 goes back through Stripe and the €50 onto the card."""
    code = buy_card(visitor_client)["code"]
    order = event_order_of_70(online_client)

    assert pay_with_card(online_client, order["orderId"], code).status_code == 201
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.HELD
    stripe = start_stripe_payment(online_client, order["orderId"])
    assert stripe.amount == 20
    stripe_on.pay(stripe.reference)
    payment_state(stripe, "confirmed")

    confirmed = online_client.get(f"/v1.1/orders/{order['orderId']}").json()
    assert confirmed["status"] == "confirmed"
    listed = online_client.get(f"/v1.1/orders/{order['orderId']}/payments").json()
    assert [(p["provider"], p["state"], p["amount"]) for p in listed] == [
        ("giftcard", "confirmed", 50),
        ("stripe", "confirmed", 20),
    ]
    assert GiftCard.objects.get(code=code).balance() == 0
    # Both on its receipt.
    [receipt] = online_client.get(f"/v1.1/orders/{order['orderId']}/documents").json()
    document = SaleDocument.objects.get(number=receipt["number"])
    assert [(p["provider"], p["amount"]) for p in document.payments] == [
        ("giftcard", "50.00"),
        ("stripe", "20.00"),
    ]

    cancelled = online_client.post(f"/v1.1/orders/{order['orderId']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["refundDue"] == 70
    run_task_worker()

    # Newest first: Stripe's 20 of the first ticket, then the card's 15 and 35.
    assert stripe_refunds(stripe_on, stripe) == [2000]
    assert GiftCard.objects.get(code=code).balance() == 50
    by_payment = {
        p.provider: sum(r.amount for r in p.refunds.all())
        for p in Payment.objects.filter(order_id=order["orderId"])
    }
    assert by_payment == {"giftcard": 50, "stripe": 20}
    assert set(
        Refund.objects.filter(order_id=order["orderId"]).values_list("state", flat=True)
    ) == {"done"}
    assert_ledgers_add_up()


def test_a_gift_cards_receipt_is_its_value_untaxed(visitor_client):
    card = buy_card(visitor_client, amount=40)

    [document] = visitor_client.get(f"/v1.1/orders/{card['orderId']}/documents").json()

    kept = SaleDocument.objects.get(number=document["number"])
    assert kept.total == 40 and kept.tax == 0
    assert [(line["description"], line["gross"]) for line in kept.lines] == [("Gift card", "40.00")]
