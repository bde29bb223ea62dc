"""The wallet links of the emails and the desk: signed links, without an account, that answer a
ticket's, a member card's or a gift card's Apple pass (signed by the test's own authority,
tests/wallet/conftest.py) or send the browser to Google's save link (the stand-in on loopback,
tests/wallet/google_fake.py); only for the wallets set up, refused as the API refuses."""

import re
from urllib.parse import urlsplit

import pytest
from django.core import mail, signing
from rest_framework.test import APIClient

from giftcards.models import GiftCard
from orders.membership_notifications import ACTIVATED, send_membership_notice
from orders.models import Membership, Order
from orders.notifications import send_order_confirmation
from tests.conftest import assert_problem
from tests.factories import MembershipFactory, MuseumDayFactory
from tests.orders.conftest import later, order_body
from tests.wallet.conftest import ISSUER, PASS_TYPE_ID, claims_of
from tests.wallet.google_fake import FakeGoogle
from tests.wallet.test_apple import PKPASS, pass_json, unzipped
from tests.wallet.test_cards import buy_card, sold_membership
from wallet import links
from wallet.google import SAVE_URL

PUBLIC = "https://tickets.museum.example"
LINK = re.compile(re.escape(PUBLIC) + r"/wallet/add/[^/\s\"<]+/(?:apple|google)")


@pytest.fixture(autouse=True)
def public_url(settings):
    settings.MUSEUM_PUBLIC_URL = PUBLIC


@pytest.fixture
def order(visitor_client) -> Order:
    """An order of two adults and a child, paid on account."""
    day = MuseumDayFactory(date=later()).date
    answer = visitor_client.post(
        "/v1.1/orders", order_body(day, ("adult", 2), ("child", 1)), format="json"
    )
    assert answer.status_code == 201, answer.content
    return Order.objects.get(pk=answer.json()["orderId"])


def emailed(order: Order):
    mail.outbox.clear()
    send_order_confirmation(order=Order.objects.get(pk=order.pk))
    [message] = mail.outbox
    [(html, _)] = message.alternatives
    return message.body, html


def opened(url: str):
    """The link followed by a browser: no account, the path of the museum's public address."""
    assert url.startswith(PUBLIC)
    return APIClient().get(url.removeprefix(PUBLIC), HTTP_ACCEPT="text/html,*/*;q=0.8")


def ticket_links(order: Order) -> dict[str, dict[str, str]]:
    """Each ticket's links by wallet, as the text email lists them under "Ticket <code>:"."""
    text, _ = emailed(order)
    found: dict[str, dict[str, str]] = {}
    code = None
    for line in text.splitlines():
        if line.startswith("Ticket ") and line.endswith(":"):
            code = line.removeprefix("Ticket ").removesuffix(":")
        elif code and (link := LINK.search(line)):
            found.setdefault(code, {})[link.group().rsplit("/", 1)[1]] = link.group()
    return found


# The confirmation email


def test_the_confirmation_email_links_each_ticket_to_both_wallets(apple_wallet, google, order):
    text, html = emailed(order)

    codes = sorted(order.tickets.values_list("confirmation_code", flat=True))
    found = ticket_links(order)
    assert sorted(found) == codes
    assert all(set(wallets) == {"apple", "google"} for wallets in found.values())
    assert "Add to Apple Wallet: " in text and "Add to Google Wallet: " in text
    for wallets in found.values():
        for url in wallets.values():
            assert f'href="{url}"' in html
    assert html.count(">Add to Apple Wallet</a>") == html.count(">Add to Google Wallet</a>") == 3


def test_only_the_wallet_set_up_is_linked(apple_wallet, order):
    text, html = emailed(order)

    assert text.count("Add to Apple Wallet: ") == 3 and "Google" not in text
    assert "Google" not in html


def test_without_a_wallet_set_up_the_email_has_no_links(order):
    text, html = emailed(order)

    assert "/wallet/" not in text and "Wallet" not in text
    assert "/wallet/" not in html and "Wallet" not in html


def test_a_cancelled_ticket_is_not_linked_and_a_cancelled_order_has_none(
    apple_wallet, visitor_client, order
):
    child = order.tickets.get(category__category="child")
    cancelled = visitor_client.post(f"/v1.1/orders/{order.pk}/tickets/{child.pk}/cancel")
    assert cancelled.status_code == 200, cancelled.content
    assert child.confirmation_code not in ticket_links(order) and len(ticket_links(order)) == 2

    assert visitor_client.post(f"/v1.1/orders/{order.pk}/cancel").status_code == 200
    text, html = emailed(order)
    assert "/wallet/" not in text and "/wallet/" not in html


def test_a_german_orders_email_links_its_tickets_too(apple_wallet, order):
    order.language = "de"
    order.save(update_fields=["language"])

    text, html = emailed(order)

    assert text.startswith("Vielen Dank")
    assert len(LINK.findall(text)) == len(set(LINK.findall(html))) == 3


# The pages


def test_the_emails_apple_link_downloads_the_tickets_pass(apple_wallet, order):
    code, wallets = next(iter(ticket_links(order).items()))
    ticket = order.tickets.get(confirmation_code=code)

    answer = opened(wallets["apple"])

    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"] == PKPASS
    assert answer["Content-Disposition"] == 'attachment; filename="ticket.pkpass"'
    files = unzipped(answer.content)
    assert {"manifest.json", "signature", "pass.json"} <= set(files)
    body = pass_json(answer.content)
    assert body["serialNumber"] == f"ticket-{ticket.pk}"
    assert body["passTypeIdentifier"] == PASS_TYPE_ID and body["voided"] is False
    # The same pass, and token, as the API gives its buyer.
    api = APIClient()
    api.force_authenticate(order.buyer)
    same = api.get(f"/v1.1/tickets/{ticket.pk}/wallet/apple")
    assert pass_json(same.content)["barcodes"] == body["barcodes"]


def test_the_emails_google_link_redirects_to_a_save_link_for_the_ticket(
    apple_wallet, google: FakeGoogle, order
):
    code, wallets = next(iter(ticket_links(order).items()))
    ticket = order.tickets.get(confirmation_code=code)

    answer = opened(wallets["google"])

    assert answer.status_code == 302
    assert answer["Location"].startswith(SAVE_URL)
    [saved] = claims_of(answer["Location"], google)["payload"]["eventTicketObjects"]
    assert saved["id"] == f"{ISSUER}.ticket-{ticket.pk}"
    assert saved["id"] in google.objects


def test_a_tampered_link_is_a_404(apple_wallet, order):
    url = next(iter(ticket_links(order).values()))["apple"]
    signed = urlsplit(url).path.split("/")[3]
    assert links.named_by(signed) is not None
    other = order.tickets.exclude(pk=links.named_by(signed)[1]).first()
    payload, _, signature = signed.rpartition(":")
    forged = links.sign(kind="ticket", owner_id=other.pk).rpartition(":")[0] + ":" + signature

    for wrong in (forged, payload + ":" + "A" * len(signature), "ticket", signed[:-1]):
        answer = opened(f"{PUBLIC}/wallet/add/{wrong}/apple")
        assert_problem(answer, 404)
    assert opened(url).status_code == 200


def test_another_salts_signature_names_nothing(apple_wallet, order):
    ticket = order.tickets.first()
    other_salt = signing.Signer(salt="museum.other").sign_object(["ticket", ticket.pk.hex])

    assert_problem(opened(f"{PUBLIC}/wallet/add/{other_salt}/apple"), 404)


def test_a_link_to_a_ticket_of_a_cancelled_order_gives_the_voided_pass(
    apple_wallet, visitor_client, order
):
    url = next(iter(ticket_links(order).values()))["apple"]
    assert pass_json(opened(url).content)["voided"] is False

    assert visitor_client.post(f"/v1.1/orders/{order.pk}/cancel").status_code == 200

    answer = opened(url)
    assert answer.status_code == 200
    assert pass_json(answer.content)["voided"] is True


def test_a_ticket_of_an_order_not_paid_is_refused_as_the_api_refuses_it(
    apple_wallet, google, online_client
):
    day = MuseumDayFactory(date=later()).date
    held = online_client.post("/v1.1/orders", order_body(day, ("adult", 1)), format="json")
    assert held.status_code == 201, held.content
    ticket = Order.objects.get(pk=held.json()["orderId"]).tickets.get()

    for label, url in links.wallet_links(ticket=ticket):
        answer = opened(url)
        assert assert_problem(answer, 409)["code"] == "not_paid", label
        assert answer["Content-Type"] == "application/problem+json"


def test_without_apple_set_up_the_page_is_not_configured(apple_wallet, settings, order):
    url = next(iter(ticket_links(order).values()))["apple"]
    settings.MUSEUM_WALLET_APPLE_PASS_TYPE_ID = ""

    assert assert_problem(opened(url), 404)["code"] == "wallet_not_configured"
    assert links.wallet_links(ticket=order.tickets.first()) == []


def test_the_links_are_rate_limited_per_address(apple_wallet, settings, order):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**rates, "wallet_link": "2/min"},
    }
    url = next(iter(ticket_links(order).values()))["apple"]

    answers = [opened(url).status_code for _ in range(3)]

    assert answers == [200, 200, 429]


# Member cards and gift cards


def test_the_membership_email_links_the_card_and_the_link_downloads_its_pass(
    apple_wallet, google, visitor_client, individual
):
    sold = sold_membership(visitor_client)
    mail.outbox.clear()
    send_order_confirmation(order=Order.objects.get(pk=sold["orderId"]))

    [message] = mail.outbox
    url, to_google = LINK.findall(message.body)
    assert "Add to Apple Wallet: " + url in message.body
    assert "Add to Google Wallet: " + to_google in message.body
    saved = opened(to_google)
    assert saved.status_code == 302, saved.content
    member_card = f"{ISSUER}.membership-{sold['membershipId']}"
    assert claims_of(saved["Location"], google)["payload"]["genericObjects"][0]["id"] == member_card
    answer = opened(url)
    assert answer.status_code == 200, answer.content
    assert answer["Content-Disposition"] == 'attachment; filename="member-card.pkpass"'
    assert pass_json(answer.content)["serialNumber"] == f"membership-{sold['membershipId']}"

    assert visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel").status_code == 200
    assert assert_problem(opened(url), 409)["code"] == "no_membership_card"


def test_a_redeemed_gifts_activation_notice_links_the_card(apple_wallet, online_visitor):
    member = MembershipFactory(buyer=online_visitor, email="zoe@example.org")

    send_membership_notice(membership=member, kind=ACTIVATED)

    [message] = mail.outbox
    [url] = LINK.findall(message.body)
    body = pass_json(opened(url).content)
    assert body["serialNumber"] == f"membership-{member.pk}"
    assert body["barcodes"][0]["message"].startswith("MM1.")


def test_a_pending_membership_has_no_link(apple_wallet, online_visitor):
    pending = MembershipFactory(buyer=online_visitor, status="pending", valid_from=None)

    send_membership_notice(membership=Membership.objects.get(pk=pending.pk), kind=ACTIVATED)

    assert "/wallet/" not in mail.outbox[0].body


def test_the_gift_cards_email_links_the_card(apple_wallet, visitor_client):
    sold = buy_card(visitor_client, 50)
    card = GiftCard.objects.get(pk=sold["giftCardId"])
    mail.outbox.clear()

    send_order_confirmation(order=card.order)

    [message] = mail.outbox
    [(html, _)] = message.alternatives
    [url] = LINK.findall(message.body)
    assert f'href="{url}"' in html
    answer = opened(url)
    assert answer.status_code == 200
    assert answer["Content-Disposition"] == 'attachment; filename="gift-card.pkpass"'
    assert "no-store" in answer["Cache-Control"]
    assert pass_json(answer.content)["barcodes"][0]["message"] == card.code


def test_a_gift_card_not_issued_is_refused(apple_wallet, online_client):
    sold = buy_card(online_client, 50)
    card = GiftCard.objects.get(pk=sold["giftCardId"])

    [(_, url)] = links.wallet_links(gift_card=card)

    assert assert_problem(opened(url), 409)["code"] == "gift_card_not_issued"


# The desk


def test_the_desk_order_page_shows_each_valid_tickets_links(
    apple_wallet, google, desk_client, visitor_client, order
):
    child = order.tickets.get(category__category="child")
    cancelled = visitor_client.post(f"/v1.1/orders/{order.pk}/tickets/{child.pk}/cancel")
    assert cancelled.status_code == 200, cancelled.content

    page = desk_client.get(f"/desk/orders/{order.pk}/").content.decode()

    shown = set(LINK.findall(page))
    emailed_links = {url for wallets in ticket_links(order).values() for url in wallets.values()}
    assert len(shown) == 4 and shown == emailed_links
    named = {links.named_by(url.split("/")[-2]) for url in shown}
    assert named == {
        ("ticket", pk) for pk in order.tickets.exclude(pk=child.pk).values_list("pk", flat=True)
    }


def test_the_desk_member_page_shows_the_cards_link(apple_wallet, desk_client, online_visitor):
    member = MembershipFactory(buyer=online_visitor)

    page = desk_client.get(f"/desk/members/{member.pk}/").content.decode()

    [url] = LINK.findall(page)
    assert links.named_by(url.split("/")[-2]) == ("membership", member.pk)


def test_the_desk_shows_no_links_without_a_wallet(desk_client, order):
    page = desk_client.get(f"/desk/orders/{order.pk}/").content.decode()

    assert "/wallet/add/" not in page
