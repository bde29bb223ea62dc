"""Member cards' and gift cards' passes that stay true: a renewal, a replaced card, a
cancellation or a payment with the card, once committed, rebuilds the card's kept pass on the
task queue and pushes it to the devices registered for it, through the stand-in for APNs
(tests/wallet/apns.py) that tests/wallet/test_push.py starts."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from giftcards.models import GiftCard
from museum.i18n import day_in_words
from orders.models import Membership
from orders.services.member_cards import membership_of_token, reissue_card
from tests.conftest import run_task_worker
from tests.factories import MembershipFactory
from tests.wallet.test_cards import (
    barcode,
    buy_card,
    front,
    latest,
    pass_json,
    register,
    sold_membership,
    spend_70,
)
from tests.wallet.test_push import enqueued
from wallet.models import ApplePass
from wallet.tasks import has_kept_passes, push_pass_update, refresh_passes

pytestmark = pytest.mark.django_db(transaction=True)  # on_commit and the task worker

# The device token tests/wallet/test_cards.py's `register` gives.
PUSH_TOKEN = "f" * 64
MEMBERSHIP = Membership._meta.label_lower
GIFT_CARD = GiftCard._meta.label_lower


def in_wallet(client, url: str, serial: str) -> bytes:
    """The visitor downloads the card's pass and their device registers for its updates."""
    download = client.get(url)
    assert download.status_code == 200, download.content
    assert register(serial).status_code == 201
    return download.content


def membership_in_wallet(client, membership_id) -> tuple[str, bytes]:
    serial = f"membership-{membership_id}"
    url = f"/v1.1/memberships/{membership_id}/wallet/apple"
    return serial, in_wallet(client, url, serial)


def test_a_renewal_pushes_once_to_the_device_and_its_pass_is_newer(
    apns, visitor_client, individual
):
    sold = sold_membership(visitor_client)
    serial, before = membership_in_wallet(visitor_client, sold["membershipId"])
    run_task_worker()  # the sale's email: nothing of the wallet's
    kept = ApplePass.objects.select_related("pazz").get(pazz__serial_number=serial)

    # A minute later: Last-Modified counts whole seconds.
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=1)):
        renewed = visitor_client.post(f"/v1.1/memberships/{sold['membershipId']}/renew")
        run_task_worker()
        after = latest(serial)

    assert renewed.status_code == 201, renewed.content
    assert [push.device_token for push in apns.pushes] == [PUSH_TOKEN]
    assert after["Last-Modified"] != before and after.content != before
    assert ApplePass.objects.get(pk=kept.pk).pazz.updated_at > kept.pazz.updated_at
    renewed_until = Membership.objects.get(pk=sold["membershipId"]).valid_until
    assert front(after.content)["valid_until"] == day_in_words(renewed_until)
    assert front(before)["valid_until"] != front(after.content)["valid_until"]


def test_a_replaced_card_pushes_its_pass_with_the_new_cards_token(
    apns, online_client, online_visitor, staff
):
    member = MembershipFactory(buyer=online_visitor)
    serial, before = membership_in_wallet(online_client, member.pk)

    reissue_card(membership=member, by=staff)
    run_task_worker()
    after = latest(serial).content

    assert [push.device_token for push in apns.pushes] == [PUSH_TOKEN]
    replaced = Membership.objects.get(pk=member.pk)
    card = pass_json(after)["storeCard"]["auxiliaryFields"][0]["value"]
    assert card == replaced.card_code != member.card_code
    assert membership_of_token(barcode(after)) == (replaced, False)
    assert membership_of_token(barcode(before)) == (replaced, True)  # the old card's, replaced


def test_a_cancelled_membership_voids_its_pass_and_pushes(apns, visitor_client, individual):
    sold = sold_membership(visitor_client)
    serial, before = membership_in_wallet(visitor_client, sold["membershipId"])

    cancelled = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    run_task_worker()

    assert cancelled.status_code == 200, cancelled.content
    assert [push.device_token for push in apns.pushes] == [PUSH_TOKEN]
    assert pass_json(before)["voided"] is False
    assert pass_json(latest(serial).content)["voided"] is True


def test_a_gift_card_spent_pushes_its_pass_with_the_balance_left(
    apns, visitor_client, online_client
):
    sold = buy_card(visitor_client, 100)
    serial = f"giftcard-{sold['giftCardId']}"
    before = in_wallet(
        visitor_client, f"/v1.1/gift-cards/{sold['giftCardId']}/wallet/apple", serial
    )

    spend_70(online_client, sold["code"])
    run_task_worker()

    assert [push.device_token for push in apns.pushes] == [PUSH_TOKEN]
    assert front(before)["balance"] == "€100.00"
    assert front(latest(serial).content)["balance"] == "€30.00"


def test_cards_without_passes_enqueue_nothing_for_the_wallet(
    apns, visitor_client, online_client, individual, django_assert_num_queries
):
    sold = sold_membership(visitor_client)
    card = buy_card(visitor_client, 100)

    visitor_client.post(f"/v1.1/memberships/{sold['membershipId']}/renew")
    spend_70(online_client, card["code"])
    visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    run_task_worker()

    assert enqueued(refresh_passes) == [] and enqueued(push_pass_update) == []
    assert apns.pushes == []
    with django_assert_num_queries(1):
        assert not has_kept_passes(MEMBERSHIP, sold["membershipId"])
    with django_assert_num_queries(1):
        assert not has_kept_passes(GIFT_CARD, str(card["giftCardId"]))
