"""A group order pays later, as any order pays: by card through Stripe (against localstripe),
with a gift card, or on a sales partner's account at once."""

from decimal import Decimal

import pytest

from giftcards.services import sell_gift_card
from groups.services import approval, requests
from orders.models import Channel, Order, OrderStatus, SaleDocument
from orders.providers import DESK
from orders.services.payments import start_payment
from tests.conftest import client_for
from tests.factories import staff_member
from tests.groups.conftest import school
from tests.orders.test_stripe_payments import payment_state, start_stripe_payment


@pytest.fixture
def staff(db):
    return staff_member(username="groups-desk")


def approved_for(account, day, staff):
    group = requests.request_group(account=account, **school(day.date))
    return approval.approve(request_id=group.pk, by=staff)


def test_a_group_pays_what_is_left_by_card(
    pupil, teacher, chaperones, group_day, staff, online_visitor, stripe_on
):
    group = approved_for(online_visitor, group_day, staff)
    start_payment(
        order_id=group.order_id,
        by=staff,
        provider_name=DESK,
        method="bank_transfer",
        amount=Decimal("50.40"),
    )

    payment = start_stripe_payment(client_for(online_visitor), group.order_id)
    assert payment.amount == Decimal("117.60")
    stripe_on.pay(payment.reference)

    assert payment_state(payment, "confirmed") == "confirmed"
    order = Order.objects.get(pk=group.order_id)
    assert order.status == OrderStatus.CONFIRMED and order.paid_in_full()


def test_a_group_pays_part_with_a_gift_card(
    pupil, teacher, chaperones, group_day, staff, online_visitor, visitor
):
    card = sell_gift_card(buyer=visitor, amount=Decimal("100"), email="giver@example.com")
    group = approved_for(online_visitor, group_day, staff)

    answer = client_for(online_visitor).post(
        f"/v1.1/orders/{group.order_id}/payments",
        {"provider": "giftcard", "code": card.code},
        format="json",
    )

    assert answer.status_code == 201, answer.content
    order = Order.objects.get(pk=group.order_id)
    assert (order.paid, order.due) == (Decimal("100.00"), Decimal("68.00"))
    assert card.balance() == 0


def test_a_partners_group_is_paid_on_account_at_once(
    pupil, teacher, chaperones, group_day, staff, visitor
):
    group = approved_for(visitor, group_day, staff)

    order = group.order
    assert order.channel == Channel.ON_ACCOUNT and order.paid_in_full()
    [invoice] = SaleDocument.objects.filter(order=order)
    assert invoice.terms == []
