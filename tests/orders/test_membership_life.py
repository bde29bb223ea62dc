"""A membership's life, closed (issue 46): another account's membership reads as unknown before
any rule speaks of it, the mailbox limit across accounts, a holder's name that shows, a redeemed
gift that is its holder's, the event discount for `admits` people, and personal data gone from
memberships never paid and from their kept cards."""

import uuid
from decimal import Decimal

import pytest

from orders.models import Membership, MembershipStatus, MembershipType, Order, OrderStatus, Refund
from tests.conftest import assert_problem
from tests.factories import SpecialEventFactory, UserFactory
from tests.member_visits import membership
from tests.orders.conftest import later, order_body

MEMBERSHIPS = "/v1.1/memberships"


@pytest.fixture
def individual(db):
    return MembershipType.objects.create(
        code="individual", name_en="Individual", price=Decimal("60.00"), admits=1
    )


def buy(client, code="individual", **extra):
    body = {"membershipType": code, "holderName": "Ada Lovelace", "email": "ada@example.com"}
    return client.post(MEMBERSHIPS, {**body, **extra}, format="json")


# 1. Another account's membership is unknown, whatever else is wrong with the request.


@pytest.fixture
def others(db):
    """Another account's dual membership (it admits 2), lapsed a year ago."""
    owner = UserFactory(username="someone", email="someone@example.com")
    lapsed = later(-400)
    return membership(buyer=owner, admits=2, discount=20, valid_from=lapsed)


def test_anothers_membership_is_unknown_before_any_rule_speaks_of_it(
    online_client, others, timed_day
):
    event_day = later(10)
    event = SpecialEventFactory(dates=[event_day])
    requests = [
        # Too many member places for its type: no "admits at most 2".
        order_body(timed_day.date, ("member", 3), entryTime="10:00"),
        # Member places on an event: no "members pay less", which tells its type has a discount.
        {
            "ticketType": "event",
            "eventId": str(event.pk),
            "ticketDate": event_day.isoformat(),
            "email": "ada@example.com",
            "lines": [{"category": "member", "quantity": 1}],
        },
        # Lapsed: no `validUntil`.
        order_body(timed_day.date, ("member", 1), entryTime="10:00"),
        # No member line at all.
        order_body(timed_day.date, ("adult", 1), entryTime="10:00"),
    ]
    for body in requests:
        for reference in (str(others.pk), others.card_code):
            for dry_run in (False, True):
                response = online_client.post(
                    "/v1.1/orders",
                    {**body, "membership": reference, "dryRun": dry_run},
                    format="json",
                )
                problem = assert_problem(response, 404)
                assert problem["reason"] == "unknown_membership", (body, dry_run)
                assert "validUntil" not in problem and "errors" not in problem


def test_one_ticket_of_a_membership_order_is_not_found_and_nothing_is_cancelled(
    visitor_client, staff_client, individual
):
    sold = buy(visitor_client).json()
    order = sold["orderId"]
    for client in (visitor_client, staff_client):
        for ticket in (uuid.uuid4(), sold["membershipId"]):
            answer = client.post(f"/v1.1/orders/{order}/tickets/{ticket}/cancel", {}, format="json")
            assert assert_problem(answer, 404)["status"] == 404
    assert Membership.objects.get().status == MembershipStatus.ACTIVE
    assert Order.objects.get(pk=order).status == OrderStatus.CONFIRMED
    assert not Refund.objects.exists()
