"""A gift card as a PDF: an A6 page in the card's language with the museum's name, its value,
its code in groups and as a QR code a real decoder reads (printed at 150 dpi), and its last day;
for its buyer and staff only, only once issued, drawn once and kept."""

import pytest

from giftcards import cards
from giftcards.exceptions import GiftCardNotIssued
from giftcards.models import GiftCard, GiftCardPdf
from tests.conftest import assert_problem, client_for
from tests.factories import UserFactory, door_member
from tests.giftcards.test_gift_cards import CARDS, buy_card
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, page_png, page_size_mm, pdf_text
from tests.qr import qr_texts


@pytest.fixture(autouse=True)
def museum(settings):
    settings.MUSEUM_NAME = "Rijksmuseum Test"


def card_pdf(client, card: dict, **headers):
    return client.get(f"{CARDS}/{card['giftCardId']}/card.pdf", headers=headers)


@NEEDS_POPPLER
def test_the_card_is_a6_with_its_value_code_and_last_day_and_its_code_in_a_qr(visitor_client):
    card = buy_card(visitor_client, amount=25)  # a partner's: issued at once

    answer = card_pdf(visitor_client, card)

    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf"
    last4 = card["code"][-4:]
    assert answer["Content-Disposition"] == f'inline; filename="gift-card-{last4}.pdf"'
    assert "no-store" in answer["Cache-Control"]
    pdf = answer.content
    assert page_size_mm(pdf) == (105, 148)
    text = " ".join(pdf_text(pdf).split())
    expires = GiftCard.objects.get(pk=card["giftCardId"]).expires_on
    for words in ("Rijksmuseum Test", "Gift card", "€25.00", card["code"], "Valid until"):
        assert words in text
    assert f"31 Dec {expires.year}" in text
    assert qr_texts(page_png(pdf, 1)) == {card["code"]}


@NEEDS_POPPLER
def test_the_card_speaks_its_language(visitor_client):
    card = buy_card(visitor_client, amount=40, language="de")

    text = " ".join(pdf_text(card_pdf(visitor_client, card).content).split())

    assert "Geschenkkarte" in text and "40,00 €" in text and "Gültig bis" in text
    assert "Gift card" not in text


def test_its_buyer_and_staff_get_it_and_nobody_else(visitor_client, staff_client, anonymous_client):
    card = buy_card(visitor_client)
    stranger = client_for(UserFactory(username="stranger"))
    door = client_for(door_member(username="doorkeeper"))

    assert card_pdf(visitor_client, card).status_code == 200
    assert card_pdf(staff_client, card).status_code == 200
    assert_problem(card_pdf(stranger, card), 404)
    assert_problem(card_pdf(door, card), 404)
    assert_problem(card_pdf(anonymous_client, card), 401)


def test_not_before_its_order_is_paid(online_client, staff_client):
    card = buy_card(online_client)  # held until paid

    refused = card_pdf(online_client, card, accept="application/pdf")

    assert assert_problem(refused, 409)["code"] == "gift_card_not_issued"
    with pytest.raises(GiftCardNotIssued):
        cards.card_pdf(GiftCard.objects.get(pk=card["giftCardId"]))
    paid = staff_client.post(
        f"/v1.1/orders/{card['orderId']}/payments", {"provider": "desk"}, format="json"
    )
    assert paid.status_code == 201, paid.content
    assert card_pdf(online_client, card).status_code == 200


def test_it_is_drawn_once_and_again_only_when_what_it_prints_changes(visitor_client, settings):
    card = GiftCard.objects.get(pk=buy_card(visitor_client)["giftCardId"])
    first = cards.card_pdf(card)
    kept = GiftCardPdf.objects.get(card=card)

    assert cards.card_pdf(card) == first
    assert GiftCardPdf.objects.get(card=card).made_at == kept.made_at

    settings.MUSEUM_NAME = "Another Museum"
    again = cards.card_pdf(card)
    assert again != first and GiftCardPdf.objects.get(card=card).etag != kept.etag
    assert GiftCardPdf.objects.count() == 1
