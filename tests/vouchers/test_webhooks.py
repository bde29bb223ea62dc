"""`voucher.redeemed`: made from the audit record the sale writes for each voucher an order
confirmed used, with the code, tag, order, uses and discount; heard only by the receivers of
those who may see the order."""

from decimal import Decimal

import pytest
from standardwebhooks.webhooks import Webhook

from orders.models import Voucher
from tests.conftest import client_for, run_task_worker
from tests.factories import MuseumDayFactory, partner_member
from tests.orders.conftest import later, order_body
from tests.webhooks.conftest import (
    receivers_allowed,  # noqa: F401
)

pytestmark = [
    pytest.mark.django_db(transaction=True),  # on_commit and the task worker
    pytest.mark.usefixtures("receivers_allowed"),
]


def subscribe(client, httpserver, path) -> str:
    answer = client.post(
        "/v1.1/webhooks",
        {"url": httpserver.url_for(path), "eventTypes": ["voucher.redeemed"]},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    return answer.json()["secret"]


def test_an_order_confirmed_with_a_voucher_tells_its_buyers_receiver(httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    httpserver.expect_request("/other", method="POST").respond_with_data("ok")
    shop = client_for(partner_member(username="shop"))
    secret = subscribe(shop, httpserver, "/hook")
    subscribe(client_for(partner_member(username="other-shop")), httpserver, "/other")
    MuseumDayFactory(date=later())
    voucher = Voucher.objects.create(
        code="SCHOOL", effect="amount_off", value=Decimal("3"), tag="schools", max_uses=30
    )

    body = order_body(later(), ("adult", 2), ("child", 1), voucher="school")
    placed = shop.post("/v1.1/orders", body, format="json")  # on account: confirmed at once
    assert placed.status_code == 201, placed.content
    plain = shop.post("/v1.1/orders", order_body(later(), ("adult", 1)), format="json")
    assert plain.status_code == 201
    run_task_worker()

    assert {request.path for request, _ in httpserver.log} == {"/hook"}
    [(request, _)] = httpserver.log
    message = Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
    voucher.refresh_from_db()
    assert message["type"] == "voucher.redeemed"
    assert message["data"] == {
        "voucherId": voucher.pk,
        "code": "SCHOOL",
        "tag": "schools",
        "orderId": placed.json()["orderId"],
        "uses": 3,
        "discount": 9,
        "currency": "EUR",
    }
    assert (voucher.uses, voucher.discount_given) == (3, Decimal("9.00"))
