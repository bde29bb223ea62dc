"""Two payments racing on one gift card, against a real PostgreSQL server: the card never pays
more than it holds."""

import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from django.db import connection

from giftcards import services
from giftcards.exceptions import InsufficientBalance
from giftcards.models import GiftCard
from orders.models import Payment, PaymentState
from tests.factories import SpecialEventFactory, UserFactory, partner_member
from tests.live_http import call, sign_in
from tests.orders.conftest import later, order_body

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def card_of_50() -> GiftCard:
    card = services.sell_gift_card(
        buyer=partner_member(username="partner"), amount=Decimal("50"), email="g@example.com"
    )
    assert card.balance() == 50
    return card


def test_two_redemptions_of_40_racing_on_a_card_of_50_one_wins(live_server):
    card = card_of_50()
    event = SpecialEventFactory(price=Decimal("40"), dates=[later()])
    UserFactory(username="buyer")
    sign_in(live_server.url, username="buyer")
    body = order_body(later(), ("adult", 1), ticketType="event", eventId=str(event.pk))
    orders = [
        call("POST", f"{live_server.url}/v1.1/orders", username="buyer", body=body).json()
        for _ in range(2)
    ]
    start = threading.Barrier(2)

    def pay(order):
        start.wait()
        url = f"{live_server.url}/v1.1/orders/{order['orderId']}/payments"
        answer = call(
            "POST", url, username="buyer", body={"provider": "giftcard", "code": card.code}
        )
        return answer.status, answer.json()

    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(pay, orders))

    taken = Payment.objects.filter(provider="giftcard", state=PaymentState.CONFIRMED)
    amounts = sorted(payment.amount for payment in taken)
    # One takes 40; the other finds 10 left: refused if it asked for 40, or takes the 10.
    assert amounts in ([40], [10, 40]), answers
    if amounts == [40]:
        assert sorted(status for status, _ in answers) == [201, 409]
        [refusal] = [problem for status, problem in answers if status == 409]
        assert refusal["code"] == "insufficient_balance"
    assert card.balance() == 50 - sum(amounts) >= 0


def test_the_card_is_debited_under_its_lock(db):
    """Both payments were prepared while the card held 50; the one that takes the lock second
    finds 10 and is refused, whichever it is."""
    card = card_of_50()
    buyer = UserFactory(username="buyer")
    event = SpecialEventFactory(price=Decimal("40"), dates=[later()])
    from orders.services.sale import place_order

    payments = []
    for _ in range(2):
        order = place_order(
            buyer=buyer,
            email="b@example.com",
            ticket_type="event",
            ticket_date=later(),
            event_id=event.pk,
            lines=[{"category": "adult", "quantity": 1}],
        )
        payments.append(
            Payment.objects.create(
                order=order,
                provider="giftcard",
                amount=Decimal("40"),
                currency="EUR",
                reference=str(card.pk),
                taken_by=buyer,
            )
        )
    start = threading.Barrier(2)

    def redeem(payment):
        start.wait()
        try:
            return services.redeem(card_id=card.pk, payment=payment).amount
        except InsufficientBalance:
            return "insufficient"
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(redeem, payments))

    assert sorted(outcomes, key=str) == [Decimal("-40"), "insufficient"]
    assert card.balance() == 10


def test_staffs_change_and_a_payment_racing_never_take_more_than_the_card_holds(db):
    """A payment of 40 and staff taking 20 off, at once, on a card of 50: the one that takes the
    card's lock second finds less than it takes and is refused, whichever it is."""
    card = card_of_50()
    buyer = UserFactory(username="buyer")
    staff = UserFactory(username="staff", is_staff=True)
    event = SpecialEventFactory(price=Decimal("40"), dates=[later()])
    from orders.services.sale import place_order

    order = place_order(
        buyer=buyer,
        email="b@example.com",
        ticket_type="event",
        ticket_date=later(),
        event_id=event.pk,
        lines=[{"category": "adult", "quantity": 1}],
    )
    payment = Payment.objects.create(
        order=order,
        provider="giftcard",
        amount=Decimal("40"),
        currency="EUR",
        reference=str(card.pk),
        taken_by=buyer,
    )
    start = threading.Barrier(2)

    def move(which):
        start.wait()
        try:
            if which == "payment":
                return which, services.redeem(card_id=card.pk, payment=payment).amount
            taken = services.adjust(card_id=card.pk, amount=Decimal("-20"), reason="Why", by=staff)
            return which, taken.amount
        except InsufficientBalance:
            return which, "insufficient"
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = dict(pool.map(move, ["payment", "staff"]))

    assert outcomes in (
        {"payment": Decimal("-40"), "staff": "insufficient"},
        {"payment": "insufficient", "staff": Decimal("-20")},
    )
    assert card.balance() in (Decimal("10"), Decimal("30"))
