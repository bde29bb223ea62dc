"""Apple Wallet passes of member cards and gift cards: the .pkpass through the API, signed by the
test's own authority (tests/wallet/conftest.py); the member card's barcode read by the door as the
card is, a replaced card's pass refused as the card; a gift card's balance from its ledger; and
Apple's web service naming and serving a changed pass."""

import datetime as dt
import json
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from giftcards.models import GiftCard
from museum.i18n import day_in_words
from orders.models import Membership
from orders.services.member_cards import reissue_card
from tests.conftest import assert_problem, client_for
from tests.factories import (
    MembershipFactory,
    MuseumDayFactory,
    SpecialEventFactory,
    UserFactory,
    door_member,
)
from tests.orders.conftest import later, order_body
from tests.wallet.conftest import PASS_TYPE_ID
from tests.wallet.test_apple import DEVICE, PKPASS, SERVICE, pass_json, unzipped
from tickets.exceptions import CardExpired, CardReplaced
from tickets.members import MemberAdmission, admit
from wallet.models import ApplePass


def membership_pass_url(membership) -> str:
    return f"/v1.1/memberships/{membership.pk}/wallet/apple"


def gift_card_pass_url(card_id) -> str:
    return f"/v1.1/gift-cards/{card_id}/wallet/apple"


def authorised(serial: str) -> dict:
    token = ApplePass.objects.get(pazz__serial_number=serial).pazz.authentication_token
    return {"HTTP_AUTHORIZATION": f"ApplePass {token}"}


def register(serial: str):
    return APIClient().post(
        f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}/{serial}",
        json.dumps({"pushToken": "f" * 64}),
        content_type="application/json",
        **authorised(serial),
    )


def updated_since(tag: str | None = None):
    query = {"passesUpdatedSince": tag} if tag else {}
    return APIClient().get(f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}", query)


def front(pkpass: bytes) -> dict:
    card = pass_json(pkpass)["storeCard"]
    return {f["key"]: f["value"] for f in card["primaryFields"] + card["secondaryFields"]}


def barcode(pkpass: bytes) -> str:
    return pass_json(pkpass)["barcodes"][0]["message"]


# Member cards


def test_a_member_cards_pass_shows_the_holder_and_no_email(apple_wallet, online_client, member):
    answer = online_client.get(membership_pass_url(member))

    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"] == PKPASS
    body = pass_json(answer.content)
    assert body["serialNumber"] == f"membership-{member.pk}"
    card = body["storeCard"]
    assert card["primaryFields"] == [{"key": "holder", "label": "Member", "value": "Zoë Álvarez"}]
    secondary = {field["key"]: field["value"] for field in card["secondaryFields"]}
    assert secondary == {"type": member.membership_type.name, "valid_until": "Friday 14 Mar 2031"}
    assert card["auxiliaryFields"][0]["value"] == member.card_code
    assert body["expirationDate"].startswith("2031-03-15T00:00:00")
    assert "relevantDate" not in body and body["voided"] is False
    files = unzipped(answer.content)
    emails = [member.email, member.buyer.email]
    assert all(email and email.encode() not in f for email in emails for f in files.values())
    assert "@" not in files["pass.json"].decode()


def test_a_cards_pass_speaks_its_cards_language(apple_wallet, online_client, member):
    member.language = "de"
    member.save(update_fields=["language"])

    body = pass_json(online_client.get(membership_pass_url(member)).content)

    labels = {field["key"]: field["label"] for field in body["storeCard"]["secondaryFields"]}
    assert body["storeCard"]["primaryFields"][0]["label"] == "Mitglied"
    assert labels == {"type": "Mitgliedschaft", "valid_until": "Gültig bis"}


def test_the_member_passs_barcode_is_the_cards_token_and_admits_at_the_door(
    apple_wallet, online_client, member, untimed_today
):
    token = barcode(online_client.get(membership_pass_url(member)).content)

    admitted = admit(scanned=token, by=door_member(), people=1)

    assert isinstance(admitted, MemberAdmission)
    assert admitted.membership == member and admitted.people == 1


def test_a_replaced_cards_old_pass_is_refused_and_the_new_one_admits(
    apple_wallet, online_client, member, staff, untimed_today
):
    old = online_client.get(membership_pass_url(member))
    reissue_card(membership=member, by=staff)
    new = online_client.get(membership_pass_url(member))
    door = door_member()

    with pytest.raises(CardReplaced):
        admit(scanned=barcode(old.content), by=door, people=1)
    assert admit(scanned=barcode(new.content), by=door, people=1).people == 1
    assert barcode(new.content) != barcode(old.content)
    assert new["Last-Modified"] >= old["Last-Modified"] and new["ETag"] != old["ETag"]
    replaced = Membership.objects.get(pk=member.pk)
    assert pass_json(new.content)["storeCard"]["auxiliaryFields"][0]["value"] == replaced.card_code


def test_a_renewal_moves_valid_until_in_the_pass_and_the_device_is_told(
    apple_wallet, visitor_client, individual
):
    sold = sold_membership(visitor_client)
    member = Membership.objects.get(pk=sold["membershipId"])
    before = visitor_client.get(membership_pass_url(member))
    serial = f"membership-{member.pk}"
    assert register(serial).status_code == 201
    tag = updated_since().json()["lastUpdated"]

    # A minute later: Last-Modified counts whole seconds.
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=1)):
        renewed = visitor_client.post(f"/v1.1/memberships/{member.pk}/renew")
        listed = updated_since(tag)
        after = visitor_client.get(
            membership_pass_url(member), HTTP_IF_MODIFIED_SINCE=before["Last-Modified"]
        )

    assert renewed.status_code == 201, renewed.content
    assert listed.status_code == 200 and listed.json()["serialNumbers"] == [serial]
    assert after.status_code == 200
    assert after["Last-Modified"] != before["Last-Modified"]
    renewed_until = Membership.objects.get(pk=member.pk).valid_until
    assert renewed_until > member.valid_until
    assert front(after.content)["valid_until"] == day_in_words(renewed_until)
    assert front(before.content)["valid_until"] == day_in_words(member.valid_until)
    assert pass_json(after.content)["expirationDate"] > pass_json(before.content)["expirationDate"]
    # The card itself did not change: its barcode still admits as before.
    assert barcode(after.content) == barcode(before.content)


def sold_membership(client) -> dict:
    body = {"membershipType": "individual", "holderName": "Ada Lovelace", "email": "a@ex.com"}
    answer = client.post("/v1.1/memberships", body, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def latest(serial: str):
    return APIClient().get(f"{SERVICE}/passes/{PASS_TYPE_ID}/{serial}", **authorised(serial))


def test_a_cancelled_memberships_pass_is_voided_and_no_longer_downloaded(
    apple_wallet, visitor_client, individual
):
    sold = sold_membership(visitor_client)
    url = f"/v1.1/memberships/{sold['membershipId']}/wallet/apple"
    assert visitor_client.get(url).status_code == 200

    cancelled = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")

    assert cancelled.status_code == 200, cancelled.content
    assert pass_json(latest(f"membership-{sold['membershipId']}").content)["voided"] is True
    # Its download is refused as its card is.
    assert assert_problem(visitor_client.get(url), 409)["code"] == "no_membership_card"


def test_an_expired_memberships_pass_is_voided_as_the_door_refuses_its_card(
    apple_wallet, online_client, online_visitor
):
    member = MembershipFactory(buyer=online_visitor, valid_until=timezone.localdate())
    token = barcode(online_client.get(membership_pass_url(member)).content)
    tomorrow = timezone.localdate() + dt.timedelta(days=1)
    MuseumDayFactory(date=tomorrow)

    with time_machine.travel(timezone.make_aware(dt.datetime.combine(tomorrow, dt.time(12)))):
        voided = pass_json(latest(f"membership-{member.pk}").content)["voided"]
        with pytest.raises(CardExpired):
            admit(scanned=token, by=door_member(), people=1)

    assert voided is True


def test_an_unpaid_membership_has_no_pass(apple_wallet, online_client, online_visitor):
    pending = MembershipFactory(buyer=online_visitor, status="pending", valid_from=None)

    answer = online_client.get(membership_pass_url(pending))

    assert assert_problem(answer, 409)["code"] == "no_membership_card"


def test_another_visitors_member_pass_is_a_404_and_staff_get_it(apple_wallet, member, staff_client):
    stranger = client_for(UserFactory(username="stranger"))

    assert_problem(stranger.get(membership_pass_url(member)), 404)
    assert staff_client.get(membership_pass_url(member)).status_code == 200


# Gift cards


def buy_card(client, amount: int) -> dict:
    answer = client.post(
        "/v1.1/gift-cards", {"amount": amount, "email": "g@example.com"}, format="json"
    )
    assert answer.status_code == 201, answer.content
    return answer.json()


def spend_70(client, code: str):
    event = SpecialEventFactory(price=Decimal("35"), dates=[later()])
    body = order_body(later(), ("adult", 2), ticketType="event", eventId=str(event.pk))
    order = client.post("/v1.1/orders", body, format="json").json()
    paid = client.post(
        f"/v1.1/orders/{order['orderId']}/payments",
        {"provider": "giftcard", "code": code},
        format="json",
    )
    assert paid.status_code == 201, paid.content


def test_a_gift_cards_pass_shows_the_balance_left_and_is_voided_once_spent(
    apple_wallet, visitor_client, online_client
):
    sold = buy_card(visitor_client, 100)
    card = GiftCard.objects.get(pk=sold["giftCardId"])
    url = gift_card_pass_url(card.pk)
    first = visitor_client.get(url)
    serial = f"giftcard-{card.pk}"

    spend_70(online_client, sold["code"])
    part = APIClient().get(f"{SERVICE}/passes/{PASS_TYPE_ID}/{serial}", **authorised(serial))
    spend_70(online_client, sold["code"])
    spent = visitor_client.get(url)

    body = pass_json(first.content)
    assert first.status_code == 200 and body["serialNumber"] == serial
    assert body["barcodes"][0]["message"] == sold["code"] == card.code
    assert front(first.content)["balance"] == "€100.00" and body["voided"] is False
    assert body["expirationDate"].startswith((card.expires_on + dt.timedelta(days=1)).isoformat())
    assert front(part.content)["balance"] == "€30.00"
    assert pass_json(part.content)["voided"] is False
    assert front(spent.content)["balance"] == "€0.00"
    assert pass_json(spent.content)["voided"] is True
    assert "no-store" in spent["Cache-Control"]


def test_another_visitors_gift_card_pass_is_a_404(apple_wallet, visitor_client, online_client):
    sold = buy_card(visitor_client, 50)

    assert_problem(online_client.get(gift_card_pass_url(sold["giftCardId"])), 404)


def test_an_unpaid_gift_card_has_no_pass(apple_wallet, online_client):
    sold = buy_card(online_client, 50)

    answer = online_client.get(gift_card_pass_url(sold["giftCardId"]))

    assert assert_problem(answer, 409)["code"] == "gift_card_not_issued"


def test_without_the_apple_settings_card_passes_are_not_configured(
    settings, online_client, member, visitor_client
):
    settings.MUSEUM_WALLET_APPLE_PASS_TYPE_ID = ""
    sold = buy_card(visitor_client, 50)

    for client, url in (
        (online_client, membership_pass_url(member)),
        (visitor_client, gift_card_pass_url(sold["giftCardId"])),
    ):
        assert assert_problem(client.get(url), 404)["code"] == "wallet_not_configured"
    assert not ApplePass.objects.exists()
