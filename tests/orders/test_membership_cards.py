"""A member's card: a PNG and a bank-card-sized PDF whose QR codes a real decoder reads (the PDF
printed at 150 dpi) to the membership's signed token, in the membership's language; kept once
drawn and drawn again when what it prints changes; for its buyer and staff only, and only for a
membership that may have one (every face of it asks the same question)."""

import datetime as dt

import pytest
from django.utils import timezone

from orders import tokens
from orders.exceptions import NoMembershipCard
from orders.membership_cards import card_pdf, card_png
from orders.models import MembershipCard, MembershipStatus
from tests.conftest import assert_problem, client_for
from tests.factories import (
    MembershipFactory,
    UserFactory,
    days_from_today,
    door_member,
    staff_member,
)
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, page_png, page_size_mm, pdf_text
from tests.qr import qr_text, qr_texts

MEMBERSHIPS = "/v1.1/memberships"


@pytest.fixture(autouse=True)
def museum(settings):
    settings.MUSEUM_NAME = "Rijksmuseum Test"


@pytest.fixture
def member(online_visitor):
    return MembershipFactory(
        buyer=online_visitor, holder_name="Zoë Álvarez", valid_until=dt.date(2031, 3, 14)
    )


def card(client, membership, kind: str, **headers):
    return client.get(f"{MEMBERSHIPS}/{membership.pk}/card.{kind}", headers=headers)


def assert_names(token: str, membership) -> None:
    claim = tokens.verify_member_card_token(token)
    assert claim.membership_id == membership.pk
    assert claim.issued_on == timezone.localdate()


def test_the_png_carries_the_signed_token_of_the_membership(online_client, member):
    answer = card(online_client, member, "png")

    assert answer.status_code == 200 and answer["Content-Type"] == "image/png"
    assert answer["Content-Disposition"] == f'inline; filename="{member.card_code}.png"'
    assert_names(qr_text(answer.content), member)


@NEEDS_POPPLER
def test_the_pdf_is_a_bank_cards_size_with_its_words_and_a_code_read_at_150_dpi(
    online_client, member
):
    answer = card(online_client, member, "pdf")

    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf"
    pdf = answer.content
    assert page_size_mm(pdf) == (86, 54)  # ID-1: 85.6 x 54 mm
    text = pdf_text(pdf)
    for words in ("Rijksmuseum Test", "Zoë Álvarez", "Family", "Valid until", "14 Mar 2031"):
        assert words in text
    assert member.card_code in text
    [token] = qr_texts(page_png(pdf, 1))
    assert_names(token, member)


@NEEDS_POPPLER
def test_the_card_speaks_the_memberships_language(online_client, member):
    member.language = "fr"
    member.save()

    text = pdf_text(card(online_client, member, "pdf").content)

    assert "Famille" in text and "mars 2031" in text
    assert "Family" not in text


def test_the_card_is_drawn_once_and_answers_304_while_unchanged(online_client, member):
    first = card(online_client, member, "png")
    kept = MembershipCard.objects.get(membership=member)

    again = card(online_client, member, "png")
    pdf = card(online_client, member, "pdf")
    unchanged = card(online_client, member, "pdf", if_none_match=first["ETag"])

    assert first["ETag"] == again["ETag"] == pdf["ETag"] == f'"{kept.etag}"'
    assert again.content == first.content and pdf.content == bytes(kept.pdf)
    assert MembershipCard.objects.get(membership=member).made_at == kept.made_at
    assert unchanged.status_code == 304 and unchanged["ETag"] == first["ETag"]
    assert "no-cache" in first["Cache-Control"] and "private" in first["Cache-Control"]


@pytest.mark.parametrize(
    "change",
    [
        {"holder_name": "Grace Hopper"},
        {"valid_until": dt.date(2032, 3, 14)},  # renewed
        {"language": "de"},
    ],
)
def test_a_change_of_what_it_prints_draws_it_again(online_client, member, change):
    first = card(online_client, member, "png")
    for field, value in change.items():
        setattr(member, field, value)
    member.save()

    answer = card(online_client, member, "png", if_none_match=first["ETag"])

    assert answer.status_code == 200 and answer["ETag"] != first["ETag"]
    assert answer.content != first.content
    assert_names(qr_text(answer.content), member)
    assert MembershipCard.objects.get(membership=member).etag == answer["ETag"].strip('"')


def test_a_new_type_name_draws_it_again(online_client, member):
    first = card(online_client, member, "png")
    member.membership_type.name_en = "Household"
    member.membership_type.save()

    assert card(online_client, member, "png")["ETag"] != first["ETag"]


@pytest.mark.parametrize("kind", ["png", "pdf"])
def test_its_buyer_and_staff_see_it_and_nobody_else(member, kind, anonymous_client):
    staff = client_for(staff_member(username="curator"))
    stranger = client_for(UserFactory(username="stranger"))
    door = client_for(door_member(username="doorkeeper"))

    assert card(staff, member, kind).status_code == 200
    assert_problem(card(stranger, member, kind), 404)
    assert_problem(card(door, member, kind), 404)
    assert_problem(card(anonymous_client, member, kind), 401)


@pytest.mark.parametrize("kind", ["png", "pdf"])
def test_no_such_membership_is_404(online_client, kind, db):
    answer = online_client.get(f"{MEMBERSHIPS}/4b7f6a8e-0000-4000-8000-000000000000/card.{kind}")

    assert_problem(answer, 404)


@pytest.mark.parametrize(
    ("state", "detail"),
    [
        ({"status": MembershipStatus.PENDING, "valid_from": None, "valid_until": None}, "not paid"),
        (
            {
                "status": MembershipStatus.PENDING,
                "holder_name": "",
                "gift_code": "gift-2k7m9q-x4b1c",
                "valid_from": None,
                "valid_until": None,
            },
            "not redeemed",
        ),
        ({"status": MembershipStatus.CANCELLED, "cancelled_at": timezone.now()}, "cancelled"),
    ],
)
@pytest.mark.parametrize("kind", ["png", "pdf"])
def test_a_membership_pending_or_cancelled_has_no_card_at_any_face(
    online_client, online_visitor, desk_client, state, detail, kind
):
    membership = MembershipFactory(buyer=online_visitor, **state)

    problem = assert_problem(card(online_client, membership, kind, accept=f"image/{kind}"), 409)
    at_the_desk = desk_client.get(f"/desk/members/{membership.pk}/card.pdf", follow=True)

    assert problem["code"] == "no_membership_card" and detail in problem["detail"]
    assert at_the_desk.redirect_chain == [(f"/desk/members/{membership.pk}/", 302)]
    assert detail in at_the_desk.content.decode()
    # The activation email's attachments ask the same question.
    for face in (card_png, card_pdf):
        with pytest.raises(NoMembershipCard):
            face(membership)
    assert not MembershipCard.objects.filter(membership=membership).exists()


def test_an_expired_membership_keeps_its_card(online_client, online_visitor):
    lapsed = MembershipFactory(
        buyer=online_visitor,
        valid_from=days_from_today(-400),
        valid_until=days_from_today(-35),
        status=MembershipStatus.EXPIRED,
    )

    answer = card(online_client, lapsed, "png")

    assert answer.status_code == 200
    assert_names(qr_text(answer.content), lapsed)


def test_the_emails_attachments_are_the_kept_card(member):
    assert card_png(member) == bytes(MembershipCard.objects.get(membership=member).png)
    assert card_pdf(member) == bytes(MembershipCard.objects.get(membership=member).pdf)
    assert_names(qr_text(card_png(member)), member)
