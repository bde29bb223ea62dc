"""Every face that asks whether a membership admits today gives one answer, its reason in its
own words: the API's membership, a member visit's sale, the scanner's check-in by card token and
by typed card code, the door page, the desk's member page and the admin's list all read
Membership.validity_on."""

import datetime as dt
import re

import pytest
from django.utils import timezone

from orders import tokens
from orders.models import MembershipStatus, Validity
from tests.conftest import client_for
from tests.factories import MuseumDayFactory, UserFactory
from tests.member_visits import membership
from tests.orders.conftest import order_body

# (status, first valid day and last, from today): the membership in each state.
STATES = {
    Validity.VALID: (MembershipStatus.ACTIVE, 0, 364),
    Validity.PENDING: (MembershipStatus.PENDING, 0, 364),
    Validity.NOT_YET_VALID: (MembershipStatus.ACTIVE, 1, 365),
    Validity.EXPIRED: (MembershipStatus.ACTIVE, -365, -1),  # lapsed, not swept yet
    Validity.CANCELLED: (MembershipStatus.CANCELLED, 0, 364),
}
# What the door's card check-in answers for each reason the card does not admit.
CARD_REASONS = {
    Validity.PENDING: "card_pending",
    Validity.NOT_YET_VALID: "card_not_valid_yet",
    Validity.EXPIRED: "card_expired",
    Validity.CANCELLED: "card_cancelled",
}
DOOR_WORDS = {
    Validity.VALID: "Welcome, member",
    Validity.PENDING: "Membership not paid yet",
    Validity.NOT_YET_VALID: "Member card not valid yet",
    Validity.EXPIRED: "Member card expired",
    Validity.CANCELLED: "Member card cancelled",
}


def api_membership(member, staff) -> str:
    return client_for(staff).get(f"/v1.1/memberships/{member.pk}").json()["validityToday"]


def member_visit(member, staff) -> str:
    body = order_body(timezone.localdate(), ("member", 1), membership=str(member.pk))
    answer = client_for(member.buyer).post("/v1.1/orders", body, format="json")
    return Validity.VALID if answer.status_code == 201 else answer.json()["validity"]


def _check_in(code: str, staff) -> str:
    answer = client_for(staff).post("/v1.1/tickets/check-in", {"code": code}, format="json")
    if answer.status_code == 200:
        return Validity.VALID
    return {reason: validity for validity, reason in CARD_REASONS.items()}[answer.json()["reason"]]


def check_in_by_token(member, staff) -> str:
    token = tokens.sign_member_card(membership_id=member.pk, issued_on=timezone.localdate())
    return _check_in(token, staff)


def check_in_by_card_code(member, staff) -> str:
    return _check_in(member.card_code, staff)


def door_page(member, staff, desk_client) -> str:
    token = tokens.sign_member_card(membership_id=member.pk, issued_on=timezone.localdate())
    page = desk_client.post("/door/", {"scanned": token, "people": "1"}).content.decode()
    return next(validity for validity, words in DOOR_WORDS.items() if words in page)


def desk_page(member, staff, desk_client) -> str:
    page = desk_client.get(f"/desk/members/{member.pk}/").content.decode()
    shown = re.search(r'id="member-validity">([^<]*)<', page)[1]
    return next(v for v in Validity if v.label == shown)


def admin_list(member, staff, desk_client) -> str:
    page = desk_client.get("/admin/orders/membership/").content.decode()
    row = re.search(rf"{member.card_code}.*?</tr>", page, re.S)[0]
    return next(v for v in Validity if f">{v.label}<" in row)


FACES = [api_membership, member_visit, check_in_by_token, check_in_by_card_code]
PAGES = [door_page, desk_page, admin_list]


@pytest.fixture
def untimed_today(db):
    return MuseumDayFactory(date=timezone.localdate())


def a_membership(state: str):
    status, starts, ends = STATES[state]
    today = timezone.localdate()
    return membership(
        buyer=UserFactory(),
        status=status,
        valid_from=today + dt.timedelta(days=starts),
        valid_until=today + dt.timedelta(days=ends),
    )


@pytest.mark.parametrize("face", FACES, ids=lambda face: face.__name__)
@pytest.mark.parametrize("state", list(STATES))
def test_every_api_face_answers_a_memberships_validity_alike(untimed_today, staff, face, state):
    member = a_membership(state)
    assert member.validity_on(timezone.localdate()) == state

    assert face(member, staff) == state


@pytest.mark.parametrize("face", PAGES, ids=lambda face: face.__name__)
@pytest.mark.parametrize("state", list(STATES))
def test_every_staff_page_answers_a_memberships_validity_alike(
    untimed_today, staff, desk_client, face, state
):
    member = a_membership(state)

    assert face(member, staff, desk_client) == state
