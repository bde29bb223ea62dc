"""Google Wallet save links for member cards (generic passes) and gift cards (gift-card passes),
against the stand-in for Google on loopback (tests/wallet/google_fake.py): what the saved object
holds, the same refusals as the cards' Apple passes, and Google failing."""

import datetime as dt
import json
import uuid

import pytest
import time_machine
from django.utils import timezone

from giftcards.models import GiftCard
from tests.conftest import assert_problem, client_for, run_task_worker
from tests.factories import MembershipFactory, MuseumDayFactory, UserFactory, door_member
from tests.wallet.conftest import ISSUER, LONGEST_LINK, claims_of
from tests.wallet.google_fake import FakeGoogle
from tests.wallet.test_cards import buy_card, sold_membership, spend_70
from tickets.members import MemberAdmission, admit
from wallet.google import SAVE_URL


def membership_link(membership_id) -> str:
    return f"/v1.1/memberships/{membership_id}/wallet/google"


def gift_card_link(card_id) -> str:
    return f"/v1.1/gift-cards/{card_id}/wallet/google"


def member_object(google: FakeGoogle, membership_id) -> dict:
    return google.objects_of("generic")[f"{ISSUER}.membership-{membership_id}"]


def gift_card_object(google: FakeGoogle, card_id) -> dict:
    return google.objects_of("giftCard")[f"{ISSUER}.giftcard-{card_id}"]


def texts(saved: dict) -> dict[str, tuple[str, str]]:
    return {module["id"]: (module["header"], module["body"]) for module in saved["textModulesData"]}


# Member cards


def test_a_member_cards_link_names_its_generic_object_and_class(google, online_client, member):
    response = online_client.get(membership_link(member.pk))

    assert response.status_code == 200, response.content
    save_url = response.json()["saveUrl"]
    assert save_url.startswith(SAVE_URL) and len(save_url) < LONGEST_LINK
    claims = claims_of(save_url, google)
    assert claims["iss"] == google.account.key_json["client_email"]
    object_id = f"{ISSUER}.membership-{member.pk}"
    assert claims["payload"] == {
        "genericObjects": [{"id": object_id, "classId": f"{ISSUER}.membership"}]
    }
    assert google.objects_of("generic")[object_id]["classId"] in google.classes_of("generic")


def test_the_member_cards_object_shows_the_holder_and_no_email_and_its_token_admits(
    google, online_client, member, untimed_today
):
    online_client.get(membership_link(member.pk))

    saved = member_object(google, member.pk)
    assert saved["genericType"] == "GENERIC_MEMBERSHIP_CARD"
    assert saved["header"]["defaultValue"] == {"language": "en", "value": "Zoë Álvarez"}
    assert saved["subheader"]["defaultValue"]["value"] == "Member"
    assert saved["state"] == "ACTIVE"
    assert texts(saved)["type"] == ("Membership", member.membership_type.name)
    assert texts(saved)["valid_until"] == ("Valid until", "Friday 14 Mar 2031")
    assert saved["validTimeInterval"]["end"]["date"].startswith("2031-03-15T00:00:00")
    stored = json.dumps(saved, ensure_ascii=False)
    assert member.email not in stored and member.buyer.email not in stored and "@" not in stored
    # The barcode is the card's signed token, read by the door as the printed card's.
    assert saved["barcode"]["type"] == "QR_CODE"
    assert saved["barcode"]["alternateText"] == member.card_code
    admitted = admit(scanned=saved["barcode"]["value"], by=door_member(), people=1)
    assert isinstance(admitted, MemberAdmission) and admitted.membership == member


def test_the_member_cards_object_speaks_the_memberships_language(google, online_client, member):
    member.language = "de"
    member.save(update_fields=["language"])

    online_client.get(membership_link(member.pk), HTTP_ACCEPT_LANGUAGE="fr")

    saved = member_object(google, member.pk)
    assert saved["subheader"]["defaultValue"] == {"language": "de", "value": "Mitglied"}
    assert texts(saved)["valid_until"][0] == "Gültig bis"


# Changes, once committed, save the kept objects again on the task queue (wallet/tasks.py).
on_the_queue = pytest.mark.django_db(transaction=True)


@on_the_queue
def test_a_cancelled_memberships_saved_object_is_made_inactive_without_an_ask(
    google, visitor_client, individual
):
    sold = sold_membership(visitor_client)
    url = membership_link(sold["membershipId"])
    assert visitor_client.get(url).status_code == 200
    assert member_object(google, sold["membershipId"])["state"] == "ACTIVE"

    cancelled = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    run_task_worker()

    assert cancelled.status_code == 200, cancelled.content
    assert member_object(google, sold["membershipId"])["state"] == "INACTIVE"
    # Refused as its Apple pass is: a cancelled membership has no card to add.
    assert assert_problem(visitor_client.get(url), 409)["code"] == "no_membership_card"


@on_the_queue
def test_a_payment_with_a_saved_gift_card_updates_its_balance_at_google(
    google, visitor_client, online_client
):
    sold = buy_card(visitor_client, 100)
    assert visitor_client.get(gift_card_link(sold["giftCardId"])).status_code == 200
    run_task_worker()  # the card's sale, which its object already shows
    puts = google.calls.count(("PUT", "giftCardObject"))

    spend_70(online_client, sold["code"])
    run_task_worker()

    saved = gift_card_object(google, sold["giftCardId"])
    assert saved["balance"] == {"micros": "30000000", "currencyCode": "EUR"}
    assert saved["state"] == "ACTIVE"
    assert google.calls.count(("PUT", "giftCardObject")) == puts + 1


def test_a_cancelled_membership_never_saved_puts_nothing_at_google(
    google, visitor_client, individual
):
    sold = sold_membership(visitor_client)
    assert visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel").status_code == 200

    answer = visitor_client.get(membership_link(sold["membershipId"]))

    assert assert_problem(answer, 409)["code"] == "no_membership_card"
    assert google.objects_of("generic") == {}


def test_an_expired_memberships_object_is_inactive(google, online_client, online_visitor):
    member = MembershipFactory(buyer=online_visitor, valid_until=timezone.localdate())
    assert online_client.get(membership_link(member.pk)).status_code == 200
    tomorrow = timezone.localdate() + dt.timedelta(days=1)
    MuseumDayFactory(date=tomorrow)

    with time_machine.travel(timezone.make_aware(dt.datetime.combine(tomorrow, dt.time(12)))):
        again = online_client.get(membership_link(member.pk))

    assert again.status_code == 200
    assert member_object(google, member.pk)["state"] == "INACTIVE"


def answered(response) -> tuple[int, str | None]:
    """Its status, and a problem's code."""
    refused = response.status_code >= 400
    return response.status_code, response.json()["code"] if refused else None


def test_member_card_links_are_refused_as_their_apple_passes(
    google, apple_wallet, member, online_visitor, staff_client, anonymous_client
):
    stranger = client_for(UserFactory(username="stranger"))
    pending = MembershipFactory(buyer=online_visitor, status="pending", valid_from=None)
    asked = {
        "stranger": (stranger, member.pk, 404),
        "unknown": (stranger, uuid.uuid4(), 404),
        "signed out": (anonymous_client, member.pk, 401),
        "pending": (client_for(online_visitor), pending.pk, 409),
        "staff": (staff_client, member.pk, 200),
    }

    for case, (client, membership_id, status) in asked.items():
        apple = client.get(f"/v1.1/memberships/{membership_id}/wallet/apple")
        link = client.get(membership_link(membership_id))
        assert answered(link)[0] == status, case
        # The same refusal, code and all (a stranger's is unknown_membership, as for the card).
        assert answered(link) == answered(apple), case
    assert list(google.objects_of("generic")) == [f"{ISSUER}.membership-{member.pk}"]


# Gift cards


def test_a_gift_cards_object_holds_its_code_and_balance_and_is_inactive_once_spent(
    google, visitor_client, online_client
):
    sold = buy_card(visitor_client, 100)
    card = GiftCard.objects.get(pk=sold["giftCardId"])
    first = visitor_client.get(gift_card_link(card.pk))
    saved = gift_card_object(google, card.pk)

    spend_70(online_client, sold["code"])
    spend_70(online_client, sold["code"])
    spent = visitor_client.get(gift_card_link(card.pk))

    assert first.status_code == 200, first.content
    claims = claims_of(first.json()["saveUrl"], google)
    object_id = f"{ISSUER}.giftcard-{card.pk}"
    assert claims["payload"] == {
        "giftCardObjects": [{"id": object_id, "classId": f"{ISSUER}.giftcard"}]
    }
    assert len(first.json()["saveUrl"]) < LONGEST_LINK
    assert google.classes_of("giftCard")[saved["classId"]]["allowBarcodeRedemption"] is True
    assert saved["cardNumber"] == saved["barcode"]["value"] == sold["code"] == card.code
    assert saved["balance"] == {"micros": "100000000", "currencyCode": "EUR"}
    assert saved["state"] == "ACTIVE"
    assert saved["validTimeInterval"]["end"]["date"].startswith(
        (card.expires_on + dt.timedelta(days=1)).isoformat()
    )
    assert spent.status_code == 200
    now = gift_card_object(google, card.pk)
    assert now["balance"]["micros"] == "0" and now["state"] == "INACTIVE"
    assert google.calls.count(("PUT", "giftCardObject")) == 1


def test_gift_card_links_are_refused_as_their_apple_passes(
    google, apple_wallet, visitor_client, online_client, staff_client, anonymous_client
):
    paid = buy_card(visitor_client, 50)["giftCardId"]
    unpaid = buy_card(online_client, 50)["giftCardId"]
    asked = {
        "another visitor": (online_client, paid, 404),
        "unknown": (online_client, uuid.uuid4(), 404),
        "signed out": (anonymous_client, paid, 401),
        "not paid": (online_client, unpaid, 409),
        "staff": (staff_client, paid, 200),
    }

    for case, (client, card_id, status) in asked.items():
        apple = client.get(f"/v1.1/gift-cards/{card_id}/wallet/apple")
        link = client.get(gift_card_link(card_id))
        assert answered(link)[0] == status, case
        assert answered(link) == answered(apple), case
    assert list(google.objects_of("giftCard")) == [f"{ISSUER}.giftcard-{paid}"]


# Both


@pytest.fixture
def both_links(visitor_client, online_client, member) -> list:
    """A member card's link and a gift card's, each with a client that may have it."""
    card = buy_card(visitor_client, 50)
    return [
        (online_client, membership_link(member.pk)),
        (visitor_client, gift_card_link(card["giftCardId"])),
    ]


def test_a_browser_is_redirected_to_the_cards_save_links(google, both_links):
    for client, url in both_links:
        response = client.get(url, HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")

        assert response.status_code == 302
        assert response["Location"].startswith(SAVE_URL)
        claims_of(response["Location"], google)


def test_google_failing_is_a_503_for_the_cards_links(google, both_links):
    google.down = True

    for client, url in both_links:
        response = client.get(url)

        assert assert_problem(response, 503)["code"] == "wallet_unavailable"
        assert int(response["Retry-After"]) > 0


def test_without_google_wallet_the_cards_links_are_not_configured(
    google, both_links, settings, visitor_client
):
    settings.MUSEUM_WALLET_GOOGLE_ISSUER_ID = ""
    unknown = [
        (visitor_client, membership_link(uuid.uuid4())),
        (visitor_client, gift_card_link(uuid.uuid4())),
    ]

    for client, url in both_links + unknown:
        assert assert_problem(client.get(url), 404)["code"] == "wallet_not_configured"
    assert google.calls == []
