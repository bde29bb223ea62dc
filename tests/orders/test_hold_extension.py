"""extend_hold: a held order that confirm_order confirms keeps its places longer."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from orders.exceptions import HoldExpired, HoldTooLong, PaymentRequired
from orders.models import OrderStatus
from orders.services.holds import extend_hold
from orders.services.sale import place_order
from tests.factories import UserFactory, partner_member

LINES = [{"category": "adult", "quantity": 1}]


def held(buyer, day, minutes=None):
    return place_order(
        buyer=buyer,
        email="a@example.com",
        ticket_type="general",
        ticket_date=day.date,
        lines=LINES,
        hold=True,
        hold_until=None if minutes is None else timezone.now() + dt.timedelta(minutes=minutes),
    )


def test_a_partners_hold_is_placed_for_its_minutes_and_extended(open_day):
    partner = partner_member(username="reseller")
    order = held(partner, open_day, minutes=5)
    assert order.status == OrderStatus.HELD
    assert order.hold_expires_at - order.created_at < dt.timedelta(minutes=6)

    extended = extend_hold(order_id=order.pk, by=partner, minutes=45)

    assert extended.hold_expires_at > timezone.now() + dt.timedelta(minutes=44)


def test_a_hold_is_never_extended_past_its_latest(open_day):
    partner = partner_member(username="reseller")
    order = held(partner, open_day, minutes=5)
    latest = order.created_at + dt.timedelta(minutes=30)
    extend_hold(order_id=order.pk, by=partner, minutes=20, latest=latest)

    with pytest.raises(HoldTooLong) as refused:
        extend_hold(order_id=order.pk, by=partner, minutes=31, latest=latest)

    order.refresh_from_db()
    assert order.hold_expires_at < latest  # as the first extension left it
    assert refused.value.code == "hold_too_long"
    assert refused.value.extra["latest"] == latest.isoformat()


def test_a_hold_that_ran_out_is_not_extended(open_day):
    partner = partner_member(username="reseller")
    order = held(partner, open_day, minutes=5)
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=6)):
        with pytest.raises(HoldExpired):
            extend_hold(order_id=order.pk, by=partner, minutes=45)


def test_an_online_order_to_pay_keeps_its_payments_hold(open_day):
    visitor = UserFactory(username="visitor")
    order = held(visitor, open_day)
    with pytest.raises(PaymentRequired):
        extend_hold(order_id=order.pk, by=visitor, minutes=45)
