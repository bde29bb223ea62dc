"""A gift card's webhooks, made from the audit records of its ledger: `giftcard.issued` once,
and `giftcard.transaction` for every move (issued, redeemed, credited back, adjusted), each with
the balance after it; never the card's code (its last four characters only), and only to the
receivers of those who may see the card."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from standardwebhooks.webhooks import Webhook

from giftcards import services
from giftcards.models import GiftCard
from tests.conftest import client_for, run_task_worker
from tests.factories import partner_member
from tests.giftcards.test_gift_cards import buy_card, event_order_of_70, pay_with_card
from tests.webhooks.conftest import (
    receivers_allowed,  # noqa: F401
)

pytestmark = [
    pytest.mark.django_db(transaction=True),  # on_commit and the task worker
    pytest.mark.usefixtures("receivers_allowed"),
]
TYPES = ["giftcard.issued", "giftcard.transaction"]


def subscribe(client, httpserver, path="/hook") -> str:
    answer = client.post(
        "/v1.1/webhooks", {"url": httpserver.url_for(path), "eventTypes": TYPES}, format="json"
    )
    assert answer.status_code == 201, answer.content
    return answer.json()["secret"]


def test_every_move_of_a_card_reaches_its_buyers_receiver_without_its_code(
    httpserver, online_client, staff
):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    httpserver.expect_request("/other", method="POST").respond_with_data("ok")
    shop = client_for(partner_member(username="shop"))
    secret = subscribe(shop, httpserver)
    subscribe(client_for(partner_member(username="other-shop")), httpserver, "/other")

    bought = buy_card(shop, amount=50)  # issued
    spent = event_order_of_70(online_client)
    assert pay_with_card(online_client, spent["orderId"], bought["code"]).status_code == 201
    assert online_client.post(f"/v1.1/orders/{spent['orderId']}/cancel").status_code == 200
    services.adjust(
        card_id=bought["giftCardId"], amount=Decimal("-10"), reason="Torn card", by=staff
    )
    run_task_worker()

    raw = [request.get_data(as_text=True) for request, _ in httpserver.log]
    assert {request.path for request, _ in httpserver.log} == {"/hook"}  # not the other shop's
    code = GiftCard.objects.get(pk=bought["giftCardId"]).code
    assert not any(code in body or code.replace("-", "") in body for body in raw)
    bodies = [
        Webhook(secret).verify(body, dict(request.headers))
        for body, (request, _) in zip(raw, httpserver.log, strict=True)
    ]
    moves = sorted(
        (body["data"]["transactionId"], body["type"], body["data"]["kind"]) for body in bodies
    )
    assert [(kind, event) for _, event, kind in moves] == [
        ("issued", "giftcard.issued"),
        ("issued", "giftcard.transaction"),
        ("redeemed", "giftcard.transaction"),
        ("credited", "giftcard.transaction"),
        ("adjusted", "giftcard.transaction"),
    ]
    ledger = sorted(
        (body["data"] for body in bodies if body["type"] == "giftcard.transaction"),
        key=lambda data: data["transactionId"],
    )
    assert [(data["amount"], data["balanceAfter"]) for data in ledger] == [
        (50, 50),
        (-50, 0),
        (50, 50),
        (-10, 40),
    ]
    assert {data["giftCardId"] for data in ledger} == {bought["giftCardId"]}
    assert {data["codeEnd"] for data in ledger} == {code[-4:]}
    assert [data["orderId"] for data in ledger] == [
        bought["orderId"],
        spent["orderId"],
        spent["orderId"],
        None,
    ]
    assert ledger[1]["paymentId"] is not None and ledger[3]["reason"] == "Torn card"
    assert ledger[0]["currency"] == "EUR" and ledger[0]["expiresOn"] is not None


def test_staff_who_may_view_any_card_hear_of_every_card(httpserver, staff):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    staff.user_permissions.add(Permission.objects.get(codename="manage_own_webhooks"))
    subscribe(client_for(staff), httpserver)

    buy_card(client_for(partner_member(username="shop")))
    run_task_worker()

    assert sorted(request.get_json()["type"] for request, _ in httpserver.log) == TYPES
