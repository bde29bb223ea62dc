"""A gift membership's gift card: an A6 PDF in the gift's language whose QR code a real decoder
reads (printed at 150 dpi) to the gift code, with the code, the type and what it gives in words;
for the gift's buyer and staff only, only once the gift is paid and until it is redeemed (its
giver still sees the membership then, without its holder's data), asked
alike of every face (the API, the desk, the giver's email, which attaches it)."""

from decimal import Decimal

import pytest
from django.core import mail

from orders.exceptions import NoGiftCard
from orders.membership_cards import gift_card_pdf
from orders.models import Membership, MembershipType
from tests.conftest import assert_problem, client_for, run_task_worker
from tests.factories import MembershipFactory, UserFactory, door_member
from tests.orders.test_memberships_sale import MEMBERSHIPS, buy
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, page_png, page_size_mm, pdf_text
from tests.qr import qr_texts


@pytest.fixture(autouse=True)
def museum(settings):
    settings.MUSEUM_NAME = "Rijksmuseum Test"


@pytest.fixture
def family(db):
    return MembershipType.objects.create(
        code="family",
        name_en="Family",
        name_fr="Famille",
        price=Decimal("120.00"),
        admits=6,
        validity_months=12,
    )


def give(client, **extra) -> dict:
    answer = buy(client, "family", gift=True, holderName="", email="giver@example.com", **extra)
    assert answer.status_code == 201, answer.content
    return answer.json()


def gift_card(client, gift: dict, **headers):
    return client.get(f"{MEMBERSHIPS}/{gift['membershipId']}/gift.pdf", headers=headers)


def redeem(client, gift: dict):
    body = {"giftCode": gift["giftCode"], "holderName": "Ada", "email": "ada@example.com"}
    answer = client.post(f"{MEMBERSHIPS}/redeem", body, format="json")
    assert answer.status_code == 200, answer.content


def assert_refused_at_every_face(client, desk_client, gift: dict, detail: str) -> None:
    """The API's 409, the desk's message on the member's page, and no PDF for the email."""
    problem = assert_problem(gift_card(client, gift, accept="application/pdf"), 409)
    assert problem["code"] == "no_gift_card" and detail in problem["detail"]
    page = f"/desk/members/{gift['membershipId']}/"
    at_the_desk = desk_client.get(f"{page}gift.pdf", follow=True)
    assert at_the_desk.redirect_chain == [(page, 302)]
    assert detail in at_the_desk.content.decode()
    assert 'id="print-gift-card"' not in at_the_desk.content.decode()
    with pytest.raises(NoGiftCard):
        gift_card_pdf(Membership.objects.get(pk=gift["membershipId"]))


@NEEDS_POPPLER
def test_the_gift_card_is_a6_with_the_code_in_words_and_in_a_qr_read_at_150_dpi(
    visitor_client, family
):
    gift = give(visitor_client)  # paid on account: confirmed at once

    answer = gift_card(visitor_client, gift)

    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf"
    assert answer["Content-Disposition"] == f'inline; filename="{gift["giftCode"]}.pdf"'
    assert "no-store" in answer["Cache-Control"]
    pdf = answer.content
    assert page_size_mm(pdf) == (105, 148)
    text = " ".join(pdf_text(pdf).split())
    for words in (
        "Rijksmuseum Test",
        "Gift membership",
        "Family",
        "Valid for 12 months",
        "admits 6 people",
        "front desk",
        gift["giftCode"],
    ):
        assert words in text
    assert qr_texts(page_png(pdf, 1)) == {gift["giftCode"]}


@NEEDS_POPPLER
def test_the_gift_card_speaks_the_gifts_language(visitor_client, family):
    gift = give(visitor_client)
    Membership.objects.filter(pk=gift["membershipId"]).update(language="fr")

    text = pdf_text(gift_card(visitor_client, gift).content)

    assert "Famille" in text and "Family" not in text


def test_its_buyer_and_staff_get_it_and_nobody_else(
    visitor_client, staff_client, anonymous_client, family
):
    gift = give(visitor_client)
    stranger = client_for(UserFactory(username="stranger"))
    door = client_for(door_member(username="doorkeeper"))

    assert gift_card(visitor_client, gift).status_code == 200
    assert gift_card(staff_client, gift).status_code == 200
    assert_problem(gift_card(stranger, gift), 404)
    assert_problem(gift_card(door, gift), 404)
    assert_problem(gift_card(anonymous_client, gift), 401)


@NEEDS_POPPLER
def test_not_before_the_gifts_order_is_paid(online_client, staff_client, desk_client, family):
    gift = give(online_client)  # held until paid

    assert_refused_at_every_face(online_client, desk_client, gift, "not paid")

    paid = staff_client.post(
        f"/v1.1/orders/{gift['orderId']}/payments", {"provider": "desk"}, format="json"
    )
    assert paid.status_code == 201, paid.content
    assert qr_texts_of(gift_card(online_client, gift).content) == {gift["giftCode"]}


def test_not_once_redeemed_its_code_is_spent(
    visitor_client, online_client, staff_client, desk_client, family
):
    gift = give(visitor_client)
    redeem(online_client, gift)

    assert_refused_at_every_face(online_client, desk_client, gift, "redeemed")
    assert_problem(gift_card(staff_client, gift), 409)
    # The giver still sees the gift, redeemed: its card is spent for the giver too.
    to_giver = assert_problem(gift_card(visitor_client, gift), 409)
    assert to_giver["code"] == "no_gift_card" and "redeemed" in to_giver["detail"]


def test_its_giver_sees_it_redeemed_without_its_holders_data(
    visitor_client, online_client, staff_client, family
):
    gift = give(visitor_client)
    redeem(online_client, gift)
    page = f"{MEMBERSHIPS}/{gift['membershipId']}"

    to_giver = visitor_client.get(page)
    listed = visitor_client.get(MEMBERSHIPS).json()
    searched = visitor_client.get(MEMBERSHIPS, {"search": "Ada"}).json()
    to_holder = online_client.get(page).json()
    stranger = client_for(UserFactory(username="stranger"))

    assert to_giver.status_code == 200, to_giver.content
    seen = to_giver.json()
    assert seen["status"] == "active" and seen["redeemedAt"] is not None
    hidden = ("holderName", "email", "cardCode", "cardUrl")
    assert {field: seen[field] for field in hidden} == dict.fromkeys(hidden)
    assert "giftCode" not in seen
    assert [m["membershipId"] for m in listed] == [gift["membershipId"]]
    assert listed[0]["holderName"] is None
    assert searched == []  # a search never tells the giver who holds it
    assert (to_holder["holderName"], to_holder["email"]) == ("Ada", "ada@example.com")
    assert staff_client.get(page).json()["holderName"] == "Ada"
    # What only the holder's account does stays unknown to the giver, and to anyone else.
    for client in (visitor_client, stranger):
        assert_problem(client.get(f"{page}/card.png"), 404)
        assert_problem(client.post(f"{page}/renew"), 404)
    assert_problem(stranger.get(page), 404)
    assert_problem(gift_card(stranger, gift), 404)


def test_not_once_its_purchase_is_cancelled(visitor_client, desk_client, family):
    gift = give(visitor_client)
    cancelled = visitor_client.post(f"/v1.1/orders/{gift['orderId']}/cancel")
    assert cancelled.status_code == 200, cancelled.content

    assert_refused_at_every_face(visitor_client, desk_client, gift, "cancelled")


def test_not_for_a_membership_that_is_not_a_gift(online_client, online_visitor, desk_client):
    member = MembershipFactory(buyer=online_visitor)
    as_gift = {"membershipId": str(member.pk)}

    assert_refused_at_every_face(online_client, desk_client, as_gift, "not a gift")


@NEEDS_POPPLER
def test_the_desk_prints_a_paid_gifts_card_from_the_members_page(
    visitor_client, desk_client, family
):
    gift = give(visitor_client)

    page = desk_client.get(f"/desk/members/{gift['membershipId']}/").content.decode()
    printed = desk_client.get(f"/desk/members/{gift['membershipId']}/gift.pdf")

    assert f'href="/desk/members/{gift["membershipId"]}/gift.pdf" id="print-gift-card"' in page
    assert printed.status_code == 200 and printed["Content-Type"] == "application/pdf"
    assert qr_texts_of(printed.content) == {gift["giftCode"]}


@NEEDS_POPPLER
@pytest.mark.django_db(transaction=True)
def test_the_givers_email_carries_the_gift_card_and_a_cancellation_none(
    visitor_client, family, settings
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    gift = give(visitor_client)
    run_task_worker()

    [to_giver] = mail.outbox
    [(filename, pdf, mimetype), (invoice, _, _)] = to_giver.attachments
    assert invoice.startswith("I")  # the partner's invoice for the gift
    assert to_giver.to == ["giver@example.com"] and gift["giftCode"] in to_giver.body
    assert (filename, mimetype) == (f"{gift['giftCode']}.pdf", "application/pdf")
    assert qr_texts_of(pdf) == {gift["giftCode"]}

    mail.outbox.clear()
    assert visitor_client.post(f"/v1.1/orders/{gift['orderId']}/cancel").status_code == 200
    run_task_worker()
    [cancelled] = mail.outbox
    assert "cancelled" in cancelled.subject
    # No gift card: the invoice, and the credit note for what goes back.
    assert [name[0] for name, _, _ in cancelled.attachments] == ["I", "C"]


def qr_texts_of(pdf: bytes) -> set[str]:
    return qr_texts(page_png(pdf, 1))
