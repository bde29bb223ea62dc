"""Member visits through the orders API: free member places that take a slot's kept places first,
the rules that admit them, the event discount and what a member order pays."""

import datetime as dt
from decimal import Decimal

import pytest

from hours.models import EntrySlot, MuseumDay
from orders.models import MembershipStatus, Order, OrderStatus, Ticket
from tests.conftest import assert_problem, client_for
from tests.factories import MuseumDayFactory, SpecialEventFactory, UserFactory, staff_member
from tests.member_visits import membership
from tests.orders.conftest import later, order_body


@pytest.fixture
def member(online_visitor):
    return membership(buyer=online_visitor, admits=2)


@pytest.fixture
def kept_slot(db):
    """A slot a week ahead (well before its cut-off) of 4 places, 2 of them kept for members."""
    day = MuseumDayFactory(date=later(7), opens_at=dt.time(10), closes_at=dt.time(17))
    return EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=4, member_places=2)


def member_body(slot, member, n=2, *more, **extra):
    return order_body(
        slot.day_id, ("member", n), *more, entryTime="10:00", membership=str(member.pk), **extra
    )


def test_a_member_visit_is_free_confirmed_at_once_and_takes_the_kept_places(
    online_client, member, kept_slot
):
    response = online_client.post("/v1.1/orders", member_body(kept_slot, member), format="json")

    assert response.status_code == 201, response.json()
    order = response.json()
    assert order["status"] == "confirmed" and order["total"] == 0
    assert order["membershipId"] == str(member.pk)
    assert [ticket["category"] for ticket in order["tickets"]] == ["member", "member"]
    assert {ticket["price"] for ticket in order["tickets"]} == {0}
    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (2, 2)
    assert Ticket.objects.filter(member=True, order__membership=member).count() == 2
    assert MuseumDay.objects.get(pk=kept_slot.day_id).sold == 2


def test_the_card_code_names_the_membership_too(online_client, member, kept_slot):
    body = member_body(kept_slot, member, 1)
    body["membership"] = member.card_code.upper().replace("-", " ")

    response = online_client.post("/v1.1/orders", body, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["membershipId"] == str(member.pk)


def test_the_public_cannot_take_the_kept_places_before_the_cut_off(
    visitor_client, online_client, member, kept_slot
):
    slots = visitor_client.get(f"/v1.1/museum-hours/{kept_slot.day_id}/slots").json()
    assert slots[0]["available"] == 2

    refused = visitor_client.post(
        "/v1.1/orders", order_body(kept_slot.day_id, ("adult", 3), entryTime="10:00"), format="json"
    )
    problem = assert_problem(refused, 409)
    assert (problem["reason"], problem["available"]) == ("sold_out", 2)

    sold = visitor_client.post(
        "/v1.1/orders", order_body(kept_slot.day_id, ("adult", 2), entryTime="10:00"), format="json"
    )
    assert sold.status_code == 201
    # The public's places are gone; the members' two are still theirs.
    assert (
        visitor_client.get(f"/v1.1/museum-hours/{kept_slot.day_id}/slots").json()[0]["available"]
        == 0
    )
    member_visit = online_client.post("/v1.1/orders", member_body(kept_slot, member), format="json")
    assert member_visit.status_code == 201
    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (4, 2)


def test_more_member_places_than_the_membership_admits_are_refused_naming_the_line(
    online_client, member, kept_slot
):
    response = online_client.post("/v1.1/orders", member_body(kept_slot, member, 3), format="json")

    problem = assert_problem(response, 400)
    assert "lines.0.quantity" in problem["errors"]
    assert EntrySlot.objects.get(pk=kept_slot.pk).sold == 0


@pytest.mark.parametrize(
    "status, valid_until, validity",
    [
        (MembershipStatus.ACTIVE, -1, "expired"),  # lapsed yesterday
        (MembershipStatus.CANCELLED, 100, "cancelled"),
        (MembershipStatus.PENDING, 100, "pending"),
    ],
)
def test_a_membership_not_valid_on_the_visit_date_is_refused_with_its_valid_until(
    online_client, online_visitor, kept_slot, status, valid_until, validity
):
    today = dt.date.today()
    until = kept_slot.day_id + dt.timedelta(days=valid_until)
    lapsed = membership(
        buyer=online_visitor,
        status=status,
        valid_from=min(today, until),
        valid_until=until,
    )

    response = online_client.post("/v1.1/orders", member_body(kept_slot, lapsed), format="json")

    problem = assert_problem(response, 409)
    assert problem["reason"] == "membership_not_valid"
    assert (problem["validUntil"], problem["validity"]) == (until.isoformat(), validity)
    assert not Order.objects.exists()


def test_one_member_visit_a_day(online_client, member, kept_slot):
    first = online_client.post("/v1.1/orders", member_body(kept_slot, member, 1), format="json")
    assert first.status_code == 201

    second = online_client.post("/v1.1/orders", member_body(kept_slot, member, 1), format="json")

    problem = assert_problem(second, 409)
    assert problem["reason"] == "member_visit_exists"
    assert EntrySlot.objects.get(pk=kept_slot.pk).member_sold == 1
    # Cancelled, the day's visit may be booked again.
    cancelled = online_client.post(
        f"/v1.1/orders/{first.json()['orderId']}/cancel", {}, format="json"
    )
    assert cancelled.status_code == 200, cancelled.json()
    again = online_client.post("/v1.1/orders", member_body(kept_slot, member, 2), format="json")
    assert again.status_code == 201


def test_the_database_refuses_a_second_visit_the_check_did_not_see(member, kept_slot):
    """Two member visits of one day racing past the check: the constraint answers as it does."""
    from orders.exceptions import MemberVisitExists
    from orders.services.member_visits import one_visit_a_day

    Order.objects.create(
        buyer=member.buyer,
        email="a@example.com",
        status=OrderStatus.CONFIRMED,
        confirmation_code="order-aaaaaa-aaaaa",
        ticket_type="general",
        date=kept_slot.day_id,
        total=0,
        membership=member,
    )
    with pytest.raises(MemberVisitExists), one_visit_a_day(member, ticket_date=kept_slot.day_id):
        Order.objects.create(
            buyer=member.buyer,
            email="a@example.com",
            status=OrderStatus.HELD,
            hold_expires_at=dt.datetime(2030, 1, 1, tzinfo=dt.UTC),
            confirmation_code="order-bbbbbb-bbbbb",
            ticket_type="general",
            date=kept_slot.day_id,
            total=0,
            membership=member,
        )


def test_cancelling_member_tickets_gives_back_the_members_places(online_client, member, kept_slot):
    order = online_client.post("/v1.1/orders", member_body(kept_slot, member), format="json").json()
    ticket = order["tickets"][0]["ticketId"]

    one = online_client.post(
        f"/v1.1/orders/{order['orderId']}/tickets/{ticket}/cancel", {}, format="json"
    )
    assert one.status_code == 200, one.json()
    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (1, 1)

    online_client.post(f"/v1.1/orders/{order['orderId']}/cancel", {}, format="json")
    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (0, 0)


def test_member_lines_need_a_membership_and_a_membership_member_lines(
    online_client, member, kept_slot
):
    without = order_body(kept_slot.day_id, ("member", 1), entryTime="10:00")
    problem = assert_problem(online_client.post("/v1.1/orders", without, format="json"), 400)
    assert "lines.0.category" in problem["errors"]

    only_adults = order_body(
        kept_slot.day_id, ("adult", 1), entryTime="10:00", membership=str(member.pk)
    )
    problem = assert_problem(online_client.post("/v1.1/orders", only_adults, format="json"), 400)
    assert "lines" in problem["errors"]


def test_someone_elses_or_an_unknown_membership_is_not_found(online_client, kept_slot):
    others = membership(buyer=UserFactory(username="someone", email="someone@example.com"))
    others.email = "someone@example.com"
    others.save()

    for reference in (str(others.pk), others.card_code, "member-zzzzzz-zzzzz"):
        body = order_body(kept_slot.day_id, ("member", 1), entryTime="10:00", membership=reference)
        for dry_run in (False, True):
            response = online_client.post(
                "/v1.1/orders", {**body, "dryRun": dry_run}, format="json"
            )
            assert assert_problem(response, 404)["reason"] == "unknown_membership"


def test_the_desk_books_a_visit_on_any_membership(member, kept_slot):
    desk = client_for(staff_member(username="desk"))

    response = desk.post("/v1.1/orders", member_body(kept_slot, member), format="json")

    assert response.status_code == 201, response.json()


def test_member_places_are_outside_the_free_places_limit(
    online_client, online_visitor, kept_slot, settings
):
    settings.MUSEUM_MAX_FREE_PLACES_PER_DAY = 1
    mine = membership(buyer=online_visitor, admits=4)
    kept_slot.capacity = 10
    kept_slot.save()

    # Four members and an infant (free): only the infant counts toward the limit.
    body = member_body(kept_slot, mine, 4, ("infant", 1))
    response = online_client.post("/v1.1/orders", body, format="json")
    assert response.status_code == 201, response.json()

    # Another day: members alone are still welcome; one more free infant is over the limit.
    for days, lines, status in ((8, [("infant", 1)], 429), (9, [], 201)):
        day = MuseumDayFactory(date=later(days))
        body = order_body(day.date, ("member", 4), *lines, membership=str(mine.pk))
        response = online_client.post("/v1.1/orders", body, format="json")
        assert response.status_code == status, response.json()
        if status == 429:
            assert response.json()["reason"] == "too_many_free_places"


def test_a_member_visit_with_paid_lines_pays_like_any_order(online_client, member, kept_slot):
    body = member_body(kept_slot, member, 1, ("adult", 1))

    response = online_client.post("/v1.1/orders", body, format="json")

    assert response.status_code == 201, response.json()
    order = response.json()
    assert (order["status"], order["total"]) == ("held", 15)
    prices = sorted((t["category"], t["price"]) for t in order["tickets"])
    assert prices == [("adult", 15), ("member", 0)]
    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (2, 1)


def test_a_held_member_visit_that_runs_out_gives_its_places_back(member, kept_slot):
    from orders.services.holds import release_expired_holds
    from orders.services.sale import place_order

    order = place_order(
        buyer=member.buyer,
        email="a@example.com",
        ticket_type="general",
        ticket_date=kept_slot.day_id,
        entry_time=kept_slot.entry_time,
        lines=[{"category": "member", "quantity": 2}],
        membership=member,
        hold=True,
    )
    Order.objects.filter(pk=order.pk).update(hold_expires_at=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))

    assert release_expired_holds() == 1

    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (0, 0)


def test_the_member_discount_applies_to_an_event(online_client, online_visitor):
    day = later(10)
    event = SpecialEventFactory(price=Decimal("20.00"), dates=[day])
    # It admits the three: each ticket has the discount (test_membership_life.py: more).
    discounted = membership(buyer=online_visitor, admits=3, discount=25)
    body = {
        "ticketType": "event",
        "eventId": str(event.pk),
        "ticketDate": day.isoformat(),
        "email": "ada@example.com",
        "lines": [{"category": "adult", "quantity": 2}, {"category": "child", "quantity": 1}],
        "membership": str(discounted.pk),
    }

    quote = online_client.post("/v1.1/orders", {**body, "dryRun": True}, format="json")
    response = online_client.post("/v1.1/orders", body, format="json")

    # Adult: 20.00 less 25 %; child: half of 20.00, less 25 %.
    assert quote.status_code == 200, quote.json()
    assert [line["price"] for line in quote.json()["lines"]] == [15, 7.5]
    assert response.status_code == 201, response.json()
    assert response.json()["total"] == 37.5
    assert response.json()["membershipId"] == str(discounted.pk)
    # Without the membership: the event's price.
    del body["membership"]
    assert online_client.post("/v1.1/orders", body, format="json").json()["total"] == 50


def test_member_places_on_an_event_are_refused(online_client, member):
    day = later(10)
    event = SpecialEventFactory(dates=[day])
    body = {
        "ticketType": "event",
        "eventId": str(event.pk),
        "ticketDate": day.isoformat(),
        "email": "ada@example.com",
        "lines": [{"category": "member", "quantity": 1}],
        "membership": str(member.pk),
    }

    problem = assert_problem(online_client.post("/v1.1/orders", body, format="json"), 400)
    assert "lines.0.category" in problem["errors"]


def test_a_member_visit_on_an_untimed_day_takes_a_day_place(online_client, member):
    day = MuseumDayFactory(date=later(5), capacity=10)

    response = online_client.post(
        "/v1.1/orders",
        order_body(day.date, ("member", 2), membership=str(member.pk)),
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert MuseumDay.objects.get(pk=day.pk).sold == 2


def test_moving_a_member_visit_moves_its_member_places(member, kept_slot):
    from orders.exceptions import MemberVisitExists
    from orders.services.changes import move_order
    from orders.services.sale import place_order

    later_slot = EntrySlot.objects.create(
        day_id=kept_slot.day_id, entry_time=dt.time(11), capacity=4, member_places=1
    )
    desk = staff_member(username="desk")

    def visit(slot, day=None):
        return place_order(
            buyer=member.buyer,
            email="a@example.com",
            ticket_type="general",
            ticket_date=day or slot.day_id,
            entry_time=slot.entry_time,
            lines=[{"category": "member", "quantity": 2}],
            membership=member,
        )

    order = visit(kept_slot)
    move_order(order_id=order.pk, by=desk, ticket_date=kept_slot.day_id, entry_time=dt.time(11))

    kept_slot.refresh_from_db()
    later_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (0, 0)
    assert (later_slot.sold, later_slot.member_sold) == (2, 2)

    # Not to a day the membership has its visit already.
    other_day = MuseumDayFactory(date=later(8), opens_at=dt.time(10), closes_at=dt.time(17))
    other_slot = EntrySlot.objects.create(day=other_day, entry_time=dt.time(10), capacity=4)
    visit(other_slot)
    with pytest.raises(MemberVisitExists):
        move_order(order_id=order.pk, by=desk, ticket_date=other_day.date, entry_time=dt.time(10))
