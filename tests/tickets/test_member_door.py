"""The door reads a member card: today's booked member visit in one scan, walk-ins on a day
without slots up to what the card admits, and refusals with the reason and the holder shown."""

import datetime as dt
import re

import pytest
from django.utils import timezone

from audit.models import AuditRecord
from hours.models import EntrySlot
from orders import tokens
from orders.models import MemberEntry, MembershipStatus, Ticket
from orders.services.sale import place_order
from tests.conftest import client_for
from tests.factories import MuseumDayFactory, TicketFactory
from tests.member_visits import membership

DOOR = "/door/"


def card(member) -> str:
    return tokens.sign_member_card(membership_id=member.pk, issued_on=timezone.localdate())


def scan(client, scanned: str, **form) -> str:
    response = client.post(DOOR, {"scanned": scanned, **form})
    assert response.status_code == 200
    return response.content.decode()


def verdict(page: str) -> str:
    match = re.search(r'class="verdict (admit|refuse)"', page)
    return match[1] if match else ""


@pytest.fixture
def timed_today(db):
    day = MuseumDayFactory(date=timezone.localdate())
    # From midnight: the door lets a ticket in from its entry time, whenever the test runs.
    return EntrySlot.objects.create(day=day, entry_time=dt.time(0), capacity=10, member_places=4)


@pytest.fixture
def untimed_today(db):
    return MuseumDayFactory(date=timezone.localdate())


def book(member, slot, n: int = 2):
    return place_order(
        buyer=member.buyer,
        email="ada@example.com",
        ticket_type="general",
        ticket_date=slot.day_id,
        entry_time=slot.entry_time,
        lines=[{"category": "member", "quantity": n}],
        membership=member,
    )


def test_a_card_admits_todays_member_visit_whole_in_one_scan(desk_client, timed_today):
    member = membership(admits=3, holder_name="Grace Hopper")
    order = book(member, timed_today, 3)

    page = scan(desk_client, card(member))

    assert verdict(page) == "admit"
    assert "Grace Hopper" in page and 'id="member-card"' in page
    assert "3 of 3 tickets admitted" in page
    assert order.confirmation_code in page
    assert Ticket.objects.filter(order=order, checked_in_at__isnull=False).count() == 3
    assert AuditRecord.objects.filter(action="checked_in", object_type="orders.ticket").count() == 3

    again = scan(desk_client, card(member))
    assert verdict(again) == "refuse"
    assert "Already checked in" in again and "Grace Hopper" in again


def test_a_typed_card_code_admits_as_the_card_does(desk_client, timed_today):
    member = membership()
    book(member, timed_today)

    page = scan(desk_client, f"  {member.card_code.upper()} ")

    assert verdict(page) == "admit"
    assert Ticket.objects.filter(checked_in_at__isnull=False).count() == 2


def test_on_a_timed_day_a_card_without_a_booked_visit_is_refused(desk_client, timed_today):
    member = membership(holder_name="Grace Hopper")

    page = scan(desk_client, card(member))

    assert verdict(page) == "refuse"
    assert "No member visit booked for today" in page and "Grace Hopper" in page
    assert not MemberEntry.objects.exists()


def test_on_an_untimed_day_the_card_admits_walk_ins_up_to_what_it_admits(
    desk_client, untimed_today
):
    member = membership(admits=3)

    first = scan(desk_client, card(member), people="2")
    second = scan(desk_client, card(member))
    third = scan(desk_client, card(member))

    assert verdict(first) == "admit" and "2 admitted (1 more today)" in first
    assert verdict(second) == "admit" and "1 admitted (0 more today)" in second
    assert verdict(third) == "refuse"
    assert "The card has admitted all it admits today" in third
    assert '<strong id="admitted-today">3</strong>' in third
    entries = MemberEntry.objects.filter(membership=member, date=untimed_today.date)
    assert sorted(entries.values_list("people", flat=True)) == [1, 2]
    assert {entry.admitted_by.username for entry in entries} == {"desk"}
    assert AuditRecord.objects.filter(object_type="orders.memberentry").count() == 2


def test_more_walk_ins_than_the_card_still_admits_are_refused_whole(desk_client, untimed_today):
    member = membership(admits=2)

    page = scan(desk_client, card(member), people="3")

    assert verdict(page) == "refuse" and "2 left" in page
    assert not MemberEntry.objects.exists()


def test_a_booked_visit_on_an_untimed_day_is_admitted_as_booked(desk_client, untimed_today):
    member = membership(admits=2)
    order = place_order(
        buyer=member.buyer,
        email="ada@example.com",
        ticket_type="general",
        ticket_date=untimed_today.date,
        lines=[{"category": "member", "quantity": 2}],
        membership=member,
    )

    page = scan(desk_client, card(member))

    assert verdict(page) == "admit" and order.confirmation_code in page
    assert not MemberEntry.objects.exists()


@pytest.mark.parametrize(
    "status, valid_from, valid_until, words",
    [
        (MembershipStatus.ACTIVE, -400, -1, "Member card expired"),
        (MembershipStatus.EXPIRED, -400, -1, "Member card expired"),
        (MembershipStatus.CANCELLED, -10, 300, "Member card cancelled"),
        (MembershipStatus.PENDING, 0, 364, "Membership not paid yet"),
        (MembershipStatus.ACTIVE, 1, 365, "Member card not valid yet"),
    ],
)
def test_a_card_not_valid_today_is_refused_with_the_reason(
    desk_client, untimed_today, status, valid_from, valid_until, words
):
    today = timezone.localdate()
    member = membership(
        status=status,
        valid_from=today + dt.timedelta(days=valid_from),
        valid_until=today + dt.timedelta(days=valid_until),
        holder_name="Grace Hopper",
    )

    page = scan(desk_client, card(member))

    assert verdict(page) == "refuse"
    assert words in page and "Grace Hopper" in page
    assert not MemberEntry.objects.exists()


def test_a_forged_or_unknown_card_admits_no_one(desk_client, untimed_today):
    member = membership()
    token = card(member)
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")

    assert verdict(scan(desk_client, forged)) == "refuse"
    assert verdict(scan(desk_client, "member-zzzzzz-zzzzz")) == "refuse"
    assert "Unknown member card" in scan(desk_client, "member-zzzzzz-zzzzz")
    assert not MemberEntry.objects.exists()


def test_a_card_code_at_the_api_check_in_admits_walk_ins_and_no_ticket(db, staff, untimed_today):
    """A code that names no ticket nor order names none, not every ticket of the day; a member
    card's walk-ins come in through the API as on the door page."""
    TicketFactory(date=untimed_today.date, museum_day_id=untimed_today.date)
    member = membership(admits=2)

    api = client_for(staff)

    card_code = api.post("/v1.1/tickets/check-in", {"code": member.card_code}, format="json")
    again = api.post("/v1.1/tickets/check-in", {"code": card(member)}, format="json")
    unknown = api.post("/v1.1/tickets/check-in", {"code": "member-zzzzzz-zzzzz"}, format="json")

    assert card_code.status_code == 200, card_code.json()
    answer = card_code.json()
    assert (answer["ticketId"], answer["admitted"], answer["orderCode"]) == (None, [], None)
    assert answer["member"]["membershipId"] == str(member.pk)
    assert (answer["member"]["people"], answer["member"]["leftToday"]) == (2, 0)
    assert again.status_code == 409 and again.json()["reason"] == "member_visits_used"
    assert unknown.status_code == 404 and unknown.json()["reason"] == "unknown_member_card"
    assert not Ticket.objects.filter(checked_in_at__isnull=False).exists()
    assert MemberEntry.objects.get().people == 2


def test_a_count_of_people_that_is_no_count_is_refused_saying_so(desk_client, untimed_today):
    member = membership(admits=2)

    for people in ("0", "-1", "21", "two"):
        page = scan(desk_client, card(member), people=people)
        assert verdict(page) == "refuse" and "a number from 1 to 20" in page

    assert not MemberEntry.objects.exists()


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_scans_of_one_card_at_once_never_admit_more_than_it_admits(door_staff):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from tickets.exceptions import MemberVisitsUsed
    from tickets.members import check_in_member

    MuseumDayFactory(date=timezone.localdate())
    member = membership(admits=3)

    def walk_in(_):
        try:
            check_in_member(membership=member, by=door_staff, people=1)
            return "admitted"
        except MemberVisitsUsed:
            return "refused"
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(walk_in, range(8)))

    assert sorted(outcomes) == ["admitted"] * 3 + ["refused"] * 5
    assert MemberEntry.objects.filter(membership=member).count() == 3


def test_a_scanner_reads_a_member_card_through_the_api(staff, timed_today):
    member = membership(admits=2)
    order = book(member, timed_today)
    api = client_for(staff)

    admitted = api.post("/v1.1/tickets/check-in", {"code": card(member)}, format="json")

    assert admitted.status_code == 200, admitted.json()
    assert admitted.json()["orderCode"] == order.confirmation_code
    assert len(admitted.json()["admitted"]) == 2
    again = api.post("/v1.1/tickets/check-in", {"code": member.card_code}, format="json")
    assert again.status_code == 409 and again.json()["reason"] == "already_checked_in"

    other = membership(valid_from=dt.date(2020, 1, 1), valid_until=dt.date(2020, 12, 31))
    expired = api.post("/v1.1/tickets/check-in", {"code": card(other)}, format="json")
    assert expired.status_code == 409
    assert (expired.json()["reason"], expired.json()["validUntil"]) == (
        "card_expired",
        "2020-12-31",
    )
    unbooked = api.post("/v1.1/tickets/check-in", {"code": card(membership())}, format="json")
    assert unbooked.status_code == 409 and unbooked.json()["reason"] == "no_member_visit"


def test_walk_ins_and_a_same_day_reservation_share_what_the_card_admits(desk_client, untimed_today):
    member = membership(admits=2)
    assert verdict(scan(desk_client, card(member), people="1")) == "admit"
    buyer = client_for(member.buyer)

    def reserve(n: int):
        body = {
            "ticketType": "general",
            "ticketDate": untimed_today.date.isoformat(),
            "email": "ada@example.com",
            "lines": [{"category": "member", "quantity": n}],
            "membership": str(member.pk),
        }
        return buyer.post("/v1.1/orders", body, format="json")

    two = reserve(2)
    assert two.status_code == 409
    assert (two.json()["code"], two.json()["left"]) == ("member_places_used", 1)
    one = reserve(1)
    assert one.status_code == 201, one.json()

    page = scan(desk_client, card(member))
    assert verdict(page) == "admit" and one.json()["confirmationCode"] in page
    assert verdict(scan(desk_client, card(member))) == "refuse"
    inside = (
        MemberEntry.objects.get().people
        + Ticket.objects.filter(checked_in_at__isnull=False).count()
    )
    assert inside == 2


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_scans_and_reservations_of_one_card_at_once_never_admit_more_than_it_admits(door_staff):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from museum.exceptions import MuseumProblem
    from tickets.members import check_in_member

    day = MuseumDayFactory(date=timezone.localdate())
    member = membership(admits=3)

    def walk_in_or_reserve(i: int) -> None:
        try:
            if i % 2:
                check_in_member(membership=member, by=door_staff, people=1)
            else:
                place_order(
                    buyer=member.buyer,
                    email="ada@example.com",
                    ticket_type="general",
                    ticket_date=day.date,
                    lines=[{"category": "member", "quantity": 2}],
                    membership=member,
                )
        except MuseumProblem:
            pass  # refused: the card's day is full, or its one visit is booked
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(walk_in_or_reserve, range(8)))

    walked_in = sum(entry.people for entry in MemberEntry.objects.filter(membership=member))
    booked = Ticket.objects.filter(order__membership=member, cancelled_at__isnull=True).count()
    assert walked_in + booked == 3
