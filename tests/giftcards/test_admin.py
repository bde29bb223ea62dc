"""Staff change a card's balance in the admin, only with a reason and only if they may
(`giftcards.change_balance`, the Museum staff's): a transaction of its ledger, with who and why,
and a record of the audit log; never below 0, never on a card not issued."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from audit.models import Action, AuditRecord
from giftcards.models import GiftCard, Transaction, TransactionKind
from tests.factories import UserFactory
from tests.giftcards.test_gift_cards import buy_card


@pytest.fixture
def card(visitor_client) -> GiftCard:
    return GiftCard.objects.get(pk=buy_card(visitor_client, amount=50)["giftCardId"])


def page(card: GiftCard) -> str:
    return f"/admin/giftcards/giftcard/{card.pk}/change/"


def form(card: GiftCard) -> str:
    return f"/admin/giftcards/giftcard/{card.pk}/balance/"


def test_staff_take_an_amount_off_with_a_reason(desk_client, card):
    assert 'id="change-balance"' in desk_client.get(page(card)).content.decode()

    answer = desk_client.post(
        form(card), {"direction": "-", "amount": "12.50", "reason": "Paid out in cash"}
    )

    assert answer.status_code == 302 and answer["Location"] == page(card)
    move = Transaction.objects.get(card=card, kind=TransactionKind.ADJUSTED)
    assert move.amount == Decimal("-12.50") and move.reason == "Paid out in cash"
    assert move.by.username == "desk" and move.order is None
    assert card.balance() == Decimal("37.50")
    record = AuditRecord.objects.get(object_id=str(card.pk), action=Action.CHANGED)
    assert record.actor.username == "desk"
    assert record.changes["kind"] == "adjusted" and record.changes["transaction"] == move.pk


def test_and_add_one(desk_client, card):
    desk_client.post(form(card), {"direction": "+", "amount": "5", "reason": "Goodwill"})

    assert card.balance() == Decimal("55.00")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"direction": "-", "amount": "10", "reason": ""}, "This field is required."),
        ({"direction": "-", "amount": "10", "reason": "   "}, "This field is required."),
        ({"direction": "-", "amount": "0", "reason": "Why"}, "greater than or equal to 0.01"),
        ({"direction": "-", "amount": "50.01", "reason": "Why"}, "holds less than"),
    ],
)
def test_without_a_reason_or_below_nothing_the_balance_stays(desk_client, card, body, error):
    answer = desk_client.post(form(card), body)

    assert answer.status_code == 200 and error in answer.content.decode()
    assert card.balance() == 50
    assert not Transaction.objects.filter(kind=TransactionKind.ADJUSTED).exists()


def test_not_on_a_card_not_issued(desk_client, online_client):
    pending = GiftCard.objects.get(pk=buy_card(online_client)["giftCardId"])

    answer = desk_client.post(form(pending), {"direction": "+", "amount": "5", "reason": "Why"})

    assert answer.status_code == 200 and "not paid yet" in answer.content.decode()
    assert not pending.transactions.exists()


def test_staff_who_may_only_view_cards_do_not_see_or_reach_the_form(card):
    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.add(
        Permission.objects.get(codename="view_giftcard"),
        Permission.objects.get(codename="view_transaction"),
    )
    client = Client()
    client.force_login(viewer)

    assert client.get(page(card)).status_code == 200
    assert 'id="change-balance"' not in client.get(page(card)).content.decode()
    assert client.get(form(card)).status_code == 403
    body = {"direction": "+", "amount": "5", "reason": "Why"}
    assert client.post(form(card), body).status_code == 403
    assert card.balance() == 50
