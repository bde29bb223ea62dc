"""A membership's whole life without a way round: its validity on a day is one answer with its
reason; cancelling it cancels its member visits from today on and its held renewals; a member
visit or a renewal confirmed or paid later asks the membership again."""

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from django.utils import timezone

from hours.models import MuseumDay
from orders import tokens
from orders.models import (
    Membership,
    MembershipStatus,
    MembershipType,
    Order,
    OrderStatus,
    Refund,
    Ticket,
    Validity,
)
from tests.conftest import assert_problem, client_for
from tests.factories import MuseumDayFactory
from tests.member_visits import membership
from tests.orders.conftest import later, order_body
from tests.orders.test_memberships_sale import MEMBERSHIPS, buy
from tests.orders.test_stripe_payments import (
    expire,
    payment_state,
    start_stripe_payment,
    stripe_on,  # noqa: F401 (the fixture)
)

TODAY = timezone.localdate


@pytest.fixture
def dual(db):
    return MembershipType.objects.create(code="dual", name="Dual", price=Decimal("80"), admits=2)


@pytest.fixture
def open_days(db):
    """Today and next week open, without entry slots."""
    return [MuseumDayFactory(date=TODAY()), MuseumDayFactory(date=later(7))]


def visit(client, membership_id: str, day: dt.date, *more: tuple[str, int]) -> dict:
    body = order_body(day, ("member", 2), *more, membership=membership_id)
    answer = client.post("/v1.1/orders", body, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


@pytest.mark.parametrize(
    "status, starts, ends, validity",
    [
        (MembershipStatus.ACTIVE, 0, 364, Validity.VALID),
        (MembershipStatus.PENDING, 0, 364, Validity.PENDING),
        (MembershipStatus.ACTIVE, 1, 365, Validity.NOT_YET_VALID),
        (MembershipStatus.ACTIVE, -365, -1, Validity.EXPIRED),  # before the sweep marks it
        (MembershipStatus.EXPIRED, -365, -1, Validity.EXPIRED),
        (MembershipStatus.CANCELLED, 0, 364, Validity.CANCELLED),
    ],
)
def test_a_memberships_validity_on_a_day_is_one_answer_that_the_sale_and_the_door_give(
    online_visitor, online_client, staff, open_days, status, starts, ends, validity
):
    today = TODAY()
    member = membership(
        buyer=online_visitor,
        status=status,
        valid_from=today + dt.timedelta(days=starts),
        valid_until=today + dt.timedelta(days=ends),
    )
    assert member.validity_on(today) == validity

    sale = online_client.post(
        "/v1.1/orders", order_body(today, ("member", 1), membership=str(member.pk)), format="json"
    )
    card = tokens.sign_member_card(membership_id=member.pk, issued_on=today)
    door = client_for(staff).post("/v1.1/tickets/check-in", {"code": card}, format="json")

    if validity == Validity.VALID:
        assert sale.status_code == 201 and door.status_code == 200
        return
    assert assert_problem(sale, 409)["validity"] == validity
    refusals = {
        Validity.PENDING: "card_pending",
        Validity.NOT_YET_VALID: "card_not_valid_yet",
        Validity.EXPIRED: "card_expired",
        Validity.CANCELLED: "card_cancelled",
    }
    assert assert_problem(door, 409)["reason"] == refusals[validity]


def test_staff_cancelling_a_membership_cancels_its_member_visits_from_today_on(
    visitor_client, staff_client, staff, dual, open_days
):
    sold = buy(visitor_client, "dual").json()
    assert sold["status"] == "active"
    today_visit = visit(visitor_client, sold["membershipId"], TODAY())
    next_week = visit(visitor_client, sold["membershipId"], later(7), ("adult", 1))
    assert MuseumDay.objects.get(date=later(7)).sold == 3

    cancelled = staff_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")

    assert cancelled.status_code == 200, cancelled.content
    statuses = Order.objects.filter(membership_id=sold["membershipId"]).values_list(
        "status", flat=True
    )
    assert set(statuses) == {OrderStatus.CANCELLED}
    assert {day.sold for day in MuseumDay.objects.all()} == {0}
    # The adult's paid place of next week's visit is paid back, as any cancellation's.
    refunds = Refund.objects.filter(order_id=next_week["orderId"])
    assert next_week["total"] > 0
    assert sum(refund.amount for refund in refunds) == next_week["total"]
    # Neither the visit's code nor its tickets let anyone in any more.
    door = client_for(staff)
    by_order = door.post(
        "/v1.1/tickets/check-in", {"code": today_visit["confirmationCode"]}, format="json"
    )
    assert assert_problem(by_order, 409)["reason"] == "cancelled"
    ticket = Ticket.objects.filter(order_id=today_visit["orderId"]).first()
    token = tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date)
    by_token = door.post("/v1.1/tickets/check-in", {"code": token}, format="json")
    assert assert_problem(by_token, 409)["reason"] == "cancelled"


def test_a_held_member_visit_whose_membership_no_longer_admits_is_refused_and_let_go(
    visitor_client, dual, open_days
):
    sold = buy(visitor_client, "dual").json()
    body = order_body(later(7), ("member", 2), membership=sold["membershipId"], hold=True)
    held = visitor_client.post("/v1.1/orders", body, format="json").json()
    assert held["status"] == "held"
    # Ended by any route (here the database, as a restore or a script might): asked again.
    Membership.objects.filter(pk=sold["membershipId"]).update(status=MembershipStatus.CANCELLED)

    confirmed = visitor_client.post(f"/v1.1/orders/{held['orderId']}/confirm")

    problem = assert_problem(confirmed, 409)
    assert (problem["code"], problem["validity"]) == ("membership_not_valid", "cancelled")
    assert Order.objects.get(pk=held["orderId"]).status == OrderStatus.CANCELLED
    assert MuseumDay.objects.get(date=later(7)).sold == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("hold", ["held", "hold ran out"])
def test_a_renewal_never_brings_a_cancelled_membership_back(
    stripe_on,  # noqa: F811
    online_client,
    dual,
    hold,
):
    sold = buy(online_client, "dual").json()
    first = start_stripe_payment(online_client, sold["orderId"])
    stripe_on.pay(first.reference)
    assert payment_state(first, "confirmed") == "confirmed"
    renewal = online_client.post(f"{MEMBERSHIPS}/{sold['membershipId']}/renew").json()
    assert renewal["status"] == "held"
    second = start_stripe_payment(online_client, renewal["orderId"])
    if hold == "hold ran out":
        expire(renewal["orderId"])

    assert online_client.post(f"/v1.1/orders/{sold['orderId']}/cancel").status_code == 200
    stripe_on.pay(second.reference)

    # The renewal's payment goes back whole; the membership stays cancelled.
    assert payment_state(second, "confirmed", "refunded") == "refunded"
    answer = online_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
    assert answer["status"] == "cancelled"
    assert Order.objects.get(pk=renewal["orderId"]).status in (
        OrderStatus.CANCELLED,
        OrderStatus.EXPIRED,
    )
    assert Refund.objects.filter(order_id=renewal["orderId"]).get().amount == 80
    again = online_client.post(f"/v1.1/orders/{renewal['orderId']}/cancel")
    assert assert_problem(again, 409)["code"] == "cancelled"


def test_cancelling_one_ticket_of_a_memberships_order_is_not_found(visitor_client, dual):
    sold = buy(visitor_client, "dual").json()
    any_ticket = "00000000-0000-0000-0000-000000000001"

    answer = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/tickets/{any_ticket}/cancel")

    assert_problem(answer, 404)
    assert Membership.objects.get().status == MembershipStatus.ACTIVE


def test_a_member_visit_booked_and_not_admitted_is_cancelled_with_the_membership_by_its_buyer(
    visitor_client, staff, dual, open_days
):
    sold = buy(visitor_client, "dual").json()
    booked = visit(visitor_client, sold["membershipId"], TODAY())

    cancelled = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")

    assert cancelled.status_code == 200, cancelled.content
    assert Order.objects.get(pk=booked["orderId"]).status == OrderStatus.CANCELLED
    assert MuseumDay.objects.get(date=TODAY()).sold == 0
    door = client_for(staff).post(
        "/v1.1/tickets/check-in", {"code": booked["confirmationCode"]}, format="json"
    )
    assert assert_problem(door, 409)["reason"] == "cancelled"


@pytest.mark.parametrize("admitted", ["booked visit", "walk-in"])
def test_a_membership_that_admitted_anyone_at_the_door_is_cancelled_only_by_staff(
    visitor_client, online_client, staff, dual, open_days, admitted
):
    sold = buy(visitor_client, "dual").json()
    card = tokens.sign_member_card(membership_id=uuid.UUID(sold["membershipId"]), issued_on=TODAY())
    if admitted == "booked visit":
        visit(visitor_client, sold["membershipId"], TODAY())
    door = client_for(staff).post("/v1.1/tickets/check-in", {"code": card}, format="json")
    assert door.status_code == 200, door.content

    refused = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    not_theirs = online_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")

    assert assert_problem(refused, 409)["code"] == "membership_used"
    assert_problem(not_theirs, 404)
    assert Membership.objects.get().status == MembershipStatus.ACTIVE
    assert client_for(staff).post(f"/v1.1/orders/{sold['orderId']}/cancel").status_code == 200
