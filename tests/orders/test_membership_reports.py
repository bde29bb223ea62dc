"""The members' reports staff read and download: members per type today, memberships begun,
renewed and lapsed per month, member visits per day and gifts paid for but not redeemed. Each
number comes from rows built to tell it apart from the rest (a lapsed membership is not active,
a cancelled renewal is no renewal, a held visit no visit), the page and its CSV agree, and the
queries do not grow with the rows; /metrics reads the members per type and counts the visits."""

import csv
import datetime as dt
import io
import itertools
from decimal import Decimal

import pytest
import time_machine
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from prometheus_client import REGISTRY

from museum import metrics
from orders.models import (
    MemberEntry,
    Membership,
    MembershipSale,
    MembershipSaleKind,
    MembershipStatus,
    MembershipType,
    OrderKind,
    OrderStatus,
    Payment,
    Refund,
)
from tests.factories import OrderFactory, TicketFactory, UserFactory
from tests.orders.test_sales_report import Tables

REPORTS = "/admin/orders/membership/reports/"
TODAY = dt.date(2030, 6, 15)
RANGE = {"first": "2030-04-01", "last": "2030-06-15"}
ACTIVE, EXPIRED = MembershipStatus.ACTIVE, MembershipStatus.EXPIRED
PENDING, CANCELLED = MembershipStatus.PENDING, MembershipStatus.CANCELLED
_codes = itertools.count(1)


@pytest.fixture(autouse=True)
def today():
    """A fixed today, so that months and ages are those the tests name."""
    with time_machine.travel(dt.datetime(2030, 6, 15, 12, tzinfo=dt.UTC), tick=False):
        yield


@pytest.fixture
def kinds(db):
    individual = MembershipType.objects.create(
        code="individual", name="Individual", price=Decimal("60"), ordering=1
    )
    family = MembershipType.objects.create(
        code="family", name="Family", name_fr="Famille", price=Decimal("120"), admits=6, ordering=2
    )
    return individual, family


def at(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(11), tzinfo=dt.UTC)


def member(kind, *, status=ACTIVE, since=None, until=None, activated=None, **fields) -> Membership:
    """A membership as the services leave it (made directly: this file tests what is read)."""
    n = next(_codes)
    return Membership.objects.create(
        membership_type=kind,
        buyer=fields.pop("buyer", None) or UserFactory(),
        holder_name=fields.pop("holder_name", f"Holder {n}"),
        email=f"holder{n}@example.com",
        status=status,
        valid_from=since,
        valid_until=until,
        card_code=f"member-{n:06d}-aaaaa",
        activated_at=at(activated) if activated else None,
        **fields,
    )


def sale(membership, kind, *, confirmed=None, cancelled=False, price="60", **period):
    """The order (of memberships) selling a period of `membership`, confirmed on `confirmed`
    (held if None)."""
    order = OrderFactory(
        buyer=membership.buyer,
        ticket_type=OrderKind.MEMBERSHIP,
        date=confirmed or TODAY,
        status=OrderStatus.CONFIRMED if confirmed else OrderStatus.HELD,
        hold_expires_at=None if confirmed else at(TODAY),
        confirmed_at=at(confirmed) if confirmed else None,
        total=Decimal(price),
        email="buyer@example.com",
    )
    return MembershipSale.objects.create(
        order=order,
        membership=membership,
        kind=kind,
        price=Decimal(price),
        cancelled_at=at(TODAY) if cancelled else None,
        **period,
    )


def d(month: int, day: int) -> dt.date:
    return dt.date(2030, month, day)


@pytest.fixture
def members(kinds):
    """Individual: 4 valid today; family: 1. Begun: April 1, May 2 (individual), June 1
    (family). Renewed: May 1, June 2 (individual). Lapsed: May 1 individual and 1 family, June 1
    individual. And rows that count nowhere."""
    individual, family = kinds
    year = {"since": d(1, 1), "until": d(12, 31)}
    member(individual, activated=d(4, 3), **year)
    member(individual, activated=d(5, 2), **year)
    renewed_in_may = member(individual, activated=d(3, 1), since=d(3, 1), until=d(12, 31))
    sale(renewed_in_may, MembershipSaleKind.RENEWAL, confirmed=d(5, 20))
    member(family, activated=d(6, 1), **year)
    # Lapsed: last days in May and June, past; the sweep marked one of them expired.
    member(individual, activated=d(5, 9), since=d(5, 9), until=d(5, 31))
    member(family, status=EXPIRED, since=d(1, 1), until=d(5, 10))
    member(individual, since=d(1, 1), until=d(6, 14))
    # Two renewals in June of memberships valid from July (not today); one cancelled, one held.
    for _ in range(2):
        renewed = member(individual, since=d(7, 1), until=d(12, 31))
        sale(renewed, MembershipSaleKind.RENEWAL, confirmed=d(6, 2))
    sale(renewed, MembershipSaleKind.RENEWAL, confirmed=d(6, 3), cancelled=True)
    sale(renewed, MembershipSaleKind.RENEWAL)
    # Valid today, ending later this month: neither lapsed nor new in the range.
    member(individual, since=d(1, 1), until=d(6, 30))
    # Counted nowhere: cancelled, not paid; begun before the range and cancelled since.
    member(individual, status=CANCELLED, since=d(1, 1), until=d(5, 15))
    member(individual, status=PENDING)
    member(family, status=CANCELLED, activated=d(3, 30), since=d(3, 30), until=d(12, 31))
    return kinds


@pytest.fixture
def visits(kinds):
    """The day before: two reservations (3 member places, 1 checked in) and a walk-in of 3;
    three days before: two walk-ins (3 people). And visits that count nowhere."""
    individual, family = kinds
    year = {"since": d(1, 1), "until": d(12, 31)}
    first, second, third = (member(family, **year) for _ in range(3))
    day_before, three_before = TODAY - dt.timedelta(days=1), TODAY - dt.timedelta(days=3)

    one = OrderFactory(membership=first, date=day_before, total=0)
    TicketFactory(order=one, date=day_before, member=True, price=0, checked_in_at=at(day_before))
    TicketFactory(order=one, date=day_before, member=True, price=0)
    TicketFactory(order=one, date=day_before, member=True, price=0, cancelled_at=at(day_before))
    two = OrderFactory(membership=second, date=day_before, total=Decimal("15"))
    TicketFactory(order=two, date=day_before, member=True, price=0)
    TicketFactory(order=two, date=day_before)  # a guest who paid: no member visit
    held = OrderFactory(
        membership=third, date=day_before, status=OrderStatus.HELD, hold_expires_at=at(TODAY)
    )
    TicketFactory(order=held, date=day_before, member=True, price=0)

    MemberEntry.objects.create(membership=third, date=day_before, people=3)
    MemberEntry.objects.create(membership=first, date=three_before, people=1)
    MemberEntry.objects.create(membership=second, date=three_before, people=2)
    MemberEntry.objects.create(membership=first, date=TODAY - dt.timedelta(days=90), people=5)
    return kinds


@pytest.fixture
def gifts(kinds):
    """Two gifts paid for and waiting (bought 45 and 5 days ago); one redeemed, one not paid,
    one whose sale was cancelled."""
    individual, family = kinds
    giver = UserFactory(username="giver")

    def gift(kind, **fields):
        n = next(_codes)
        return member(
            kind, status=PENDING, buyer=giver, holder_name="", gift_code=f"G{n}", **fields
        )

    sale(gift(family), MembershipSaleKind.GIFT, confirmed=d(5, 1), price="120")
    sale(gift(individual), MembershipSaleKind.GIFT, confirmed=d(6, 10))
    redeemed = gift(individual, redeemed_at=at(d(6, 1)))
    sale(redeemed, MembershipSaleKind.GIFT, confirmed=d(5, 30))
    sale(gift(individual), MembershipSaleKind.GIFT)
    sale(gift(individual), MembershipSaleKind.GIFT, confirmed=d(6, 1), cancelled=True)
    return kinds


def report(client, **query) -> dict[str, list[list[str]]]:
    """The page's tables by their names, each row's cells as text (the header first)."""
    answer = client.get(REPORTS, {**RANGE, **query})
    assert answer.status_code == 200
    tables = Tables(answer.content.decode()).tables
    return dict(zip(["active", "months", "visits", "gifts"], tables, strict=True))


def downloaded(client, table: str) -> list[list[str]]:
    answer = client.get(REPORTS, {**RANGE, "format": "csv", "table": table})
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(answer.content.decode())))


def test_active_members_per_type_counts_those_valid_today(members, desk_client):
    active = report(desk_client)["active"]

    assert active == [
        ["Type", "Code", "Members"],
        ["Individual", "individual", "4"],
        ["Family", "family", "1"],
        ["Total", "", "5"],
    ]
    assert downloaded(desk_client, "active") == active


def test_new_renewed_and_lapsed_per_month_and_type(members, desk_client):
    months = report(desk_client)["months"]

    assert months == [
        ["Month", "Type", "New", "Renewed", "Lapsed"],
        ["2030-04", "Individual", "1", "0", "0"],
        ["2030-05", "Individual", "2", "1", "1"],
        ["2030-05", "Family", "0", "0", "1"],
        ["2030-06", "Individual", "0", "2", "1"],
        ["2030-06", "Family", "1", "0", "0"],
        ["Total", "", "4", "3", "3"],
    ]
    assert downloaded(desk_client, "months") == months


def test_the_months_follow_the_range_asked_for(members, desk_client):
    months = report(desk_client, first="2030-03-01", last="2030-04-30")["months"]

    assert months[1:] == [
        ["2030-03", "Individual", "1", "0", "0"],
        ["2030-03", "Family", "1", "0", "0"],
        ["2030-04", "Individual", "1", "0", "0"],
        ["Total", "", "3", "0", "0"],
    ]


def test_member_visits_per_day_count_reservations_and_walk_ins(visits, desk_client):
    visits_table = report(desk_client)["visits"]

    assert visits_table == [
        [
            "Date",
            "Reservations",
            "Places reserved",
            "Checked in",
            "Walk-ins",
            "People walked in",
            "People",
        ],
        ["2030-06-12", "0", "0", "0", "2", "3", "3"],
        ["2030-06-14", "2", "3", "1", "1", "3", "6"],
        ["Total", "2", "3", "1", "3", "6", "9"],
    ]
    assert downloaded(desk_client, "visits") == visits_table


def test_unredeemed_gifts_name_the_buyer_and_their_age_not_the_gift_code(gifts, desk_client):
    waiting = report(desk_client)["gifts"]

    codes = list(Membership.objects.filter(redeemed_at=None).values_list("card_code", flat=True))
    assert [row[1:] for row in waiting[1:-1]] == [
        ["Family", "giver", "buyer@example.com", "2030-05-01", "45", "120.00"],
        ["Individual", "giver", "buyer@example.com", "2030-06-10", "5", "60.00"],
    ]
    assert all(row[0] in codes for row in waiting[1:-1])
    assert waiting[-1] == ["2 gift(s)", "", "", "", "", "", "180.00"]
    text = "".join(",".join(row) for row in downloaded(desk_client, "gifts"))
    assert not any(gift.gift_code in text for gift in Membership.objects.exclude(gift_code=None))


def test_the_reports_queries_do_not_grow_with_their_rows(members, visits, gifts, desk_client):
    with CaptureQueriesContext(connection) as few:
        report(desk_client)
    individual, family = MembershipType.objects.all()
    for n in range(5):
        more = member(individual, activated=d(5, n + 1), since=d(5, 1), until=d(6, 1 + n))
        sale(more, MembershipSaleKind.RENEWAL, confirmed=d(4, n + 1))
        MemberEntry.objects.create(membership=more, date=d(6, n + 1), people=1)
    MembershipType.objects.create(code="student", name="Student", price=Decimal("30"))

    with CaptureQueriesContext(connection) as many:
        tables = report(desk_client)

    assert len(tables["visits"]) > 4 and len(tables["active"]) == 5
    assert len(many) == len(few)


def test_an_unknown_table_is_not_found_and_the_range_is_read_forgivingly(kinds, desk_client):
    assert desk_client.get(REPORTS, {"format": "csv", "table": "nope"}).status_code == 404
    answer = desk_client.get(REPORTS, {"first": "not a date", "last": "2030-02-30"})
    assert answer.status_code == 200
    assert b"1 January 2030" in answer.content  # the default range, from five months back
    widest = report(desk_client, first="0001-01-01", last="9999-12-31")
    assert widest["months"][-1] == ["Total", "", "0", "0", "0"]


def test_the_reports_are_for_staff_who_may_see_memberships(kinds, client, bare_staff):
    client.force_login(bare_staff)
    assert client.get(REPORTS).status_code == 403


def test_the_list_of_memberships_links_the_reports(kinds, desk_client):
    page = desk_client.get("/admin/orders/membership/").content.decode()
    assert REPORTS in page


@pytest.fixture
def scraper(settings, anonymous_client):
    settings.MUSEUM_METRICS_TOKEN = "a-token-for-the-scraper"
    anonymous_client.credentials(HTTP_AUTHORIZATION="Bearer a-token-for-the-scraper")
    return anonymous_client


def test_metrics_show_active_members_per_type(members, scraper):
    text = scraper.get("/metrics").content.decode()

    assert 'museum_active_members{type="individual"} 4.0' in text
    assert 'museum_active_members{type="family"} 1.0' in text


def walk_ins() -> float:
    return REGISTRY.get_sample_value("museum_member_visits_total", {"kind": "walk_in"}) or 0.0


def test_member_visits_are_counted_once_committed(db, scraper, django_capture_on_commit_callbacks):
    before = walk_ins()
    with django_capture_on_commit_callbacks(execute=True):
        metrics.count_member_visits(3, metrics.MEMBER_WALK_IN)
        metrics.count_member_visits(2, metrics.MEMBER_RESERVATION)
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            metrics.count_member_visits(4, metrics.MEMBER_WALK_IN)
            raise RuntimeError("rolled back")

    text = scraper.get("/metrics").content.decode()
    assert walk_ins() == before + 3
    assert f'museum_member_visits_total{{kind="walk_in"}} {before + 3}' in text
    assert 'museum_member_visits_total{kind="reservation"}' in text


def test_memberships_sold_are_in_the_sales_report_and_its_takings_agree(kinds, desk_client):
    individual, family = kinds
    day, year = d(6, 1), {"since": d(6, 1), "until": dt.date(2031, 5, 31)}
    paid = {"provider": "desk", "currency": "EUR", "state": "confirmed", "confirmed_at": at(day)}
    paid["taken_by"] = UserFactory(username="desk1")
    bought = sale(member(family, **year), MembershipSaleKind.NEW, confirmed=day, price="120")
    Payment.objects.create(order=bought.order, amount=120, info="cash", **paid)
    back = sale(member(individual, status=CANCELLED), "new", confirmed=day, cancelled=True)
    payment = Payment.objects.create(order=back.order, amount=60, info="card", **paid)
    Refund.objects.create(
        order=back.order, membership_sale=back, payment=payment, amount=45, source="buyer"
    )
    sale(member(individual, status=PENDING), MembershipSaleKind.NEW)  # held: no sale
    sale(member(individual, **year), MembershipSaleKind.NEW, confirmed=d(6, 2))  # another day

    page = desk_client.get("/admin/orders/order/sales/", {"first": "2030-06-01", "last": day})
    sales, takings, _discounts = Tables(page.content.decode()).tables

    assert sales[1:] == [
        ["2030-06-01", "Membership", "Individual", "1", "60.00", "1", "45.00", "15.00"],
        ["2030-06-01", "Membership", "Family", "1", "120.00", "0", "0.00", "120.00"],
        ["Total", "", "", "2", "180.00", "1", "45.00", "135.00"],
    ]
    assert takings[-1] == ["Total", "2", "180.00", "45.00", "135.00"]
