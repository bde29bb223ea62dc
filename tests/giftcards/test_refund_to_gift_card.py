"""A cancellation refunded onto a new gift card instead of back through its payments: staff may,
a buyer only where the museum offers it; the card's value is what went back, and while it is
unspent staff may pay it back through the original payments after all."""

from decimal import Decimal

import pytest

from giftcards import services
from giftcards.models import GiftCard, TransactionKind
from orders.models import Order, Refund, RefundState
from tests.conftest import assert_problem
from tests.giftcards.test_gift_cards import buy_card, event_order_of_70, pay_with_card


def paid_with_desk_cash(staff_client, order_id):
    answer = staff_client.post(
        f"/v1.1/orders/{order_id}/payments", {"provider": "desk", "method": "cash"}, format="json"
    )
    assert answer.status_code == 201, answer.content


def test_staff_refund_a_cancellation_onto_a_new_gift_card(staff_client, online_client):
    order = event_order_of_70(online_client)
    paid_with_desk_cash(staff_client, order["orderId"])

    cancelled = staff_client.post(
        f"/v1.1/orders/{order['orderId']}/cancel", {"refundToGiftCard": True}, format="json"
    )

    assert cancelled.status_code == 200, cancelled.content
    card = GiftCard.objects.get(order__isnull=True)
    assert card.balance() == 70 and card.value == 70
    assert card.email == "family@example.com" and card.buyer.username == "online"
    refunds = Refund.objects.filter(order_id=order["orderId"])
    assert {r.state for r in refunds} == {RefundState.GIFT_CARD}
    assert {r.reference for r in refunds} == {f"gift card {card.pk}"}
    assert Order.objects.get(pk=order["orderId"]).paid_back == 70


def test_a_gift_cards_part_goes_back_onto_its_own_card(visitor_client, staff_client, online_client):
    code = buy_card(visitor_client, amount=30)["code"]
    order = event_order_of_70(online_client)
    assert pay_with_card(online_client, order["orderId"], code).status_code == 201
    paid_with_desk_cash(staff_client, order["orderId"])

    staff_client.post(
        f"/v1.1/orders/{order['orderId']}/cancel", {"refundToGiftCard": True}, format="json"
    )

    assert GiftCard.objects.get(code=code).balance() == 30
    assert GiftCard.objects.get(order__isnull=True).balance() == 40


def test_a_buyer_may_only_where_the_museum_offers_it(online_client, staff_client, settings):
    order = event_order_of_70(online_client)
    paid_with_desk_cash(staff_client, order["orderId"])
    url = f"/v1.1/orders/{order['orderId']}/cancel"

    refused = online_client.post(url, {"refundToGiftCard": True}, format="json")
    assert assert_problem(refused, 400)
    assert Order.objects.get(pk=order["orderId"]).status == "confirmed"

    settings.MUSEUM_GIFT_CARD_REFUNDS_FOR_BUYERS = True
    assert online_client.post(url, {"refundToGiftCard": True}, format="json").status_code == 200
    assert GiftCard.objects.get(order__isnull=True).balance() == 70


def test_staff_pay_an_unspent_cards_refunds_back_through_the_payments_instead(
    staff, staff_client, online_client
):
    order = event_order_of_70(online_client)
    paid_with_desk_cash(staff_client, order["orderId"])
    staff_client.post(
        f"/v1.1/orders/{order['orderId']}/cancel", {"refundToGiftCard": True}, format="json"
    )
    card = GiftCard.objects.get(order__isnull=True)

    refunds = services.pay_back_instead(card_id=card.pk, by=staff)

    assert card.balance() == 0
    assert card.transactions.order_by("pk").last().kind == TransactionKind.ADJUSTED
    # The desk's cash goes back by hand, as any desk refund does.
    assert {Refund.objects.get(pk=r.pk).state for r in refunds} == {RefundState.MANUAL}
    with pytest.raises(services.GiftCardSpent):
        services.pay_back_instead(card_id=card.pk, by=staff)


def test_a_spent_card_keeps_its_refunds(visitor_client, staff, staff_client, online_client):
    order = event_order_of_70(online_client)
    paid_with_desk_cash(staff_client, order["orderId"])
    staff_client.post(
        f"/v1.1/orders/{order['orderId']}/cancel", {"refundToGiftCard": True}, format="json"
    )
    card = GiftCard.objects.get(order__isnull=True)
    services.adjust(card_id=card.pk, amount=Decimal("-5"), reason="spent in the shop", by=staff)

    with pytest.raises(services.GiftCardSpent):
        services.pay_back_instead(card_id=card.pk, by=staff)
    assert card.balance() == 65
