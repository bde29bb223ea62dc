"""Staff refunding one donation at once, through real HTTP requests on PostgreSQL: it goes back
once, whoever asks, and the order's paid back is that refund."""

from collections import Counter
from decimal import Decimal

import pytest

from orders.models import Fund, Order, Refund
from orders.services.donations import give
from tests.factories import partner_member, staff_member
from tests.live_http import in_parallel, post, sign_in

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def test_ten_staff_refunding_one_donation_at_once_give_it_back_once(live_server):
    fund = Fund.objects.create(name="Acquisitions")
    partner = partner_member(username="hotel")
    order = give(
        buyer=partner, email="a@example.com", donations=[{"fund": fund.pk, "amount": "30"}]
    )
    [donation] = order.sold_donations
    staff_member(username="staff")
    sign_in(live_server.url, username="staff")
    url = f"{live_server.url}/v1.1/orders/{order.pk}/donations/{donation.pk}/refund"

    answers = in_parallel(10, lambda: post(url, {}, "staff"))

    assert Counter(status for status, _ in answers) == {200: 1, 409: 9}
    assert {problem["reason"] for status, problem in answers if status == 409} == {
        "donation_refunded"
    }
    [refund] = Refund.objects.filter(donation=donation)
    assert refund.amount == Decimal("30")
    assert Order.objects.get(pk=order.pk).paid_back == Decimal("30")
