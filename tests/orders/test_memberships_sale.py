"""Buying memberships through the API: the types in the request's language, a membership paid on
account (active at once), online (pending until paid: at the desk here, with Stripe in
test_memberships_stripe.py), free, and what a purchase refuses."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from audit.models import Action, AuditRecord
from orders.exceptions import UnknownMembership
from orders.models import (
    Membership,
    MembershipSale,
    MembershipType,
    Order,
    OrderKind,
    Payment,
)
from orders.services.memberships import renew_membership, sell_membership
from tests.conftest import assert_problem, client_for
from tests.factories import UserFactory, partner_member, staff_member

MEMBERSHIPS = "/v1.1/memberships"


@pytest.fixture
def individual(db):
    return MembershipType.objects.create(
        code="individual",
        name_en="Individual",
        name_fr="Individuel",
        description_en="One adult, a year.",
        description_fr="Un adulte, un an.",
        price=Decimal("60.00"),
        admits=1,
        ordering=1,
    )


@pytest.fixture
def family(db):
    return MembershipType.objects.create(
        code="family", name_en="Family", name_fr="Famille", price=Decimal("120.00"), admits=6
    )


def buy(client, code="individual", **extra):
    body = {"membershipType": code, "holderName": "Ada Lovelace", "email": "ada@example.com"}
    return client.post(MEMBERSHIPS, {**body, **extra}, format="json")


def year_from(day: dt.date) -> dt.date:
    """The last day of a 12 months' period starting on `day`."""
    return day.replace(year=day.year + 1) - dt.timedelta(days=1)


def test_the_types_on_sale_are_listed_in_the_requests_language(visitor_client, individual, family):
    MembershipType.objects.create(code="old", name="Old", price=1, active=False)
    answer = visitor_client.get("/v1.1/membership-types", HTTP_ACCEPT_LANGUAGE="fr")
    assert answer.status_code == 200
    types = answer.json()
    assert [t["membershipType"] for t in types] == ["family", "individual"]
    assert types[1]["name"] == "Individuel" and types[1]["description"] == "Un adulte, un an."
    assert types[1]["price"] == 60 and types[1]["currency"] == "EUR"
    assert types[0]["admits"] == 6 and types[0]["validityMonths"] == 12


def test_a_partner_buys_on_account_and_the_membership_is_active_at_once(visitor_client, individual):
    today = timezone.localdate()
    answer = buy(visitor_client)
    assert answer.status_code == 201, answer.content
    membership = answer.json()
    assert membership["status"] == "active"
    assert membership["validFrom"] == today.isoformat()
    assert membership["validUntil"] == year_from(today).isoformat()
    assert membership["cardCode"].startswith("member-")
    assert membership["cardUrl"] == (
        f"http://testserver/v1.1/memberships/{membership['membershipId']}/card.png"
    )
    assert "giftCode" not in membership
    order = membership["order"]
    assert order["orderId"] == membership["orderId"]
    assert order["ticketType"] == "membership" and order["tickets"] == []
    assert order["status"] == "confirmed" and order["total"] == 60
    assert order["channel"] == "on_account"
    # Paid on account, as a partner's ticket order is.
    assert Payment.objects.get(order_id=order["orderId"]).provider == "on_account"
    # The orders API answers the membership's order too.
    again = visitor_client.get(f"/v1.1/orders/{order['orderId']}")
    assert again.status_code == 200 and again.json()["ticketType"] == "membership"
    pdf = visitor_client.get(f"/v1.1/orders/{order['orderId']}/tickets.pdf")
    assert_problem(pdf, 404)
    got = visitor_client.get(f"{MEMBERSHIPS}/{membership['membershipId']}")
    assert got.status_code == 200 and got.json()["status"] == "active"
    actions = set(
        AuditRecord.objects.filter(object_id=membership["membershipId"]).values_list(
            "action", flat=True
        )
    )
    assert actions == {Action.CREATED, Action.CONFIRMED}


def test_an_online_buyer_waits_for_the_payment_taken_at_the_desk(online_client, individual, staff):
    membership = buy(
        online_client, startDate=(timezone.localdate() + dt.timedelta(days=10)).isoformat()
    )
    assert membership.status_code == 201, membership.content
    sold = membership.json()
    assert sold["status"] == "pending" and sold["validFrom"] is None
    assert sold["order"]["status"] == "held"
    paid = client_for(staff).post(
        f"/v1.1/orders/{sold['orderId']}/payments",
        {"provider": "desk", "method": "cash"},
        format="json",
    )
    assert paid.status_code == 201, paid.content
    now = online_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
    start = timezone.localdate() + dt.timedelta(days=10)
    assert now["status"] == "active"
    assert (now["validFrom"], now["validUntil"]) == (
        start.isoformat(),
        year_from(start).isoformat(),
    )


def test_staff_sell_at_the_desk_and_take_the_payment(staff, individual):
    desk = client_for(staff)
    sold = buy(desk).json()
    assert sold["status"] == "pending"
    assert (
        desk.post(
            f"/v1.1/orders/{sold['orderId']}/payments", {"provider": "desk"}, format="json"
        ).status_code
        == 201
    )
    assert desk.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()["status"] == "active"


def test_a_free_membership_is_active_at_once(online_client):
    MembershipType.objects.create(code="friend", name="Friend", price=0)
    sold = buy(online_client, "friend").json()
    assert sold["status"] == "active" and sold["order"]["status"] == "confirmed"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"membershipType": "nope"}, "membershipType"),
        ({"startDate": "2001-01-01"}, "startDate"),
        ({"startDate": "far"}, "startDate"),
        ({"holderName": "  "}, "holderName"),
        ({"gift": True, "startDate": "soon"}, "startDate"),
    ],
)
def test_what_a_purchase_refuses_says_which_field(visitor_client, individual, body, field):
    today = timezone.localdate()
    dates = {"far": today + dt.timedelta(days=91), "soon": today + dt.timedelta(days=3)}
    if body.get("startDate") in dates:
        body = {**body, "startDate": dates[body["startDate"]].isoformat()}
    problem = assert_problem(buy(visitor_client, **body), 400)
    assert field in str(problem)
    assert not Membership.objects.exists() and not Order.objects.exists()


def test_a_start_90_days_ahead_is_sold(visitor_client, individual):
    start = timezone.localdate() + dt.timedelta(days=90)
    sold = buy(visitor_client, startDate=start.isoformat()).json()
    assert sold["validFrom"] == start.isoformat()


def test_an_online_account_cannot_flood_the_museum_with_unpaid_memberships(
    online_client, individual, settings
):
    settings.MUSEUM_MAX_MEMBERSHIPS_PER_DAY = 3
    for n in range(3):
        assert buy(online_client, email=f"a{n}@example.com").status_code == 201
    problem = assert_problem(buy(online_client, email="other@example.com"), 429)
    assert problem["code"] == "too_many_memberships" and problem["limit"] == 3
    # Another account, the same mailbox spelled otherwise: the mailbox's limit.
    other = client_for(UserFactory(username="other"))
    for _ in range(3):
        assert buy(other, email="Victim+x@example.com").status_code == 201
    problem = assert_problem(buy(other, email="victim@example.com"), 429)
    assert problem["code"] == "too_many_memberships"
    # The desk sells to the people before it, without limits.
    desk = client_for(staff_member(username="desk-seller"))
    for _ in range(4):
        assert buy(desk, email="victim@example.com").status_code == 201
    assert MembershipSale.objects.count() == 10


def test_the_list_shows_ones_own_and_staff_see_and_search_all(
    visitor_client, online_client, staff, individual, family
):
    mine = buy(visitor_client).json()
    buy(online_client, "family", holderName="Grace Hopper", email="grace@example.com")
    listed = visitor_client.get(MEMBERSHIPS).json()
    assert [m["membershipId"] for m in listed] == [mine["membershipId"]]
    staff_client = client_for(staff)
    assert staff_client.get(MEMBERSHIPS)["X-Total-Count"] == "2"
    found = staff_client.get(MEMBERSHIPS, {"search": "hopper"}).json()
    assert [m["holderName"] for m in found] == ["Grace Hopper"]
    by_card = staff_client.get(MEMBERSHIPS, {"search": mine["cardCode"]}).json()
    assert [m["membershipId"] for m in by_card] == [mine["membershipId"]]
    pending = staff_client.get(MEMBERSHIPS, {"status": "pending"}).json()
    assert [m["membershipType"] for m in pending] == ["family"]
    soon = year_from(timezone.localdate()).isoformat()
    expiring = staff_client.get(
        MEMBERSHIPS, {"expiringBefore": soon, "membershipType": "individual"}
    )
    assert len(expiring.json()) == 1
    assert_problem(staff_client.get(MEMBERSHIPS, {"status": "lost"}), 400)
    assert_problem(visitor_client.get(MEMBERSHIPS, {"colour": "red"}), 400)
    # Another's membership is not found.
    assert_problem(online_client.get(f"{MEMBERSHIPS}/{mine['membershipId']}"), 404)


def test_a_membership_order_is_listed_with_the_orders(visitor_client, individual):
    sold = buy(visitor_client).json()
    orders = visitor_client.get("/v1.1/orders").json()
    assert [o["orderId"] for o in orders] == [sold["orderId"]]
    assert Order.objects.get().ticket_type == OrderKind.MEMBERSHIP


def test_the_desk_sells_on_a_partners_account_and_the_audit_names_the_seller(staff, individual):
    """As the desk's ticket sales do (desk/views.py): the partner buys, staff sell."""
    partner = partner_member(username="school")
    membership = sell_membership(
        buyer=partner,
        type_code="individual",
        holder_name="Ada",
        email="",
        language="de",
        seller=staff,
    )
    assert membership.status == "active" and membership.order.channel == "on_account"
    assert membership.buyer == partner and membership.language == "de"
    created = AuditRecord.objects.get(object_id=str(membership.pk), action=Action.CREATED)
    assert created.actor == staff
    order = renew_membership(membership=membership, buyer=partner, seller=staff)
    assert order.status == "confirmed" and order.buyer == partner
    stranger = UserFactory(username="stranger")
    with pytest.raises(UnknownMembership):
        renew_membership(membership=membership, buyer=stranger)
