"""The gift card reports, in the museum's days: the liability at a date (active and expired),
the moves per month, the expired balances per year of expiry; each one aggregate query, with
CSV; and they reconcile: the liability is the sum of the cards' balances, and issued − redeemed
+ credited ± adjusted."""

import csv
import datetime as dt
from decimal import Decimal
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.test import Client

from giftcards import reports, services
from giftcards.models import GiftCard
from tests.factories import SpecialEventFactory, UserFactory, door_member
from tests.giftcards.test_gift_cards import buy_card, pay_with_card
from tests.orders.conftest import later, order_body

AMSTERDAM = ZoneInfo("Europe/Amsterdam")
REPORTS = "/admin/giftcards/giftcard/reports/"


def at(*moment: int):
    """The museum's clock at that moment, stopped."""
    return time_machine.travel(dt.datetime(*moment, tzinfo=AMSTERDAM), tick=False)


def spend(client, code: str, amount: int) -> str:
    """An order of `amount` paid whole by the card; its id."""
    event = SpecialEventFactory(price=Decimal(amount), dates=[later()])
    body = order_body(later(), ("adult", 1), ticketType="event", eventId=str(event.pk))
    order = client.post("/v1.1/orders", body, format="json").json()
    assert pay_with_card(client, order["orderId"], code).status_code == 201
    return order["orderId"]


@pytest.fixture
def ledgers(settings, visitor_client, online_client, staff):
    """A card of 100 issued in 2021 (its last day 31 December 2024), 30 of it spent in the last
    half hour of that day and 5 honoured by staff after; a card of 50 issued in the last half
    hour of January 2025, 20 spent and credited back in February, 10 taken off in March."""
    settings.TIME_ZONE = "Europe/Amsterdam"
    with at(2021, 6, 1, 12):
        old = buy_card(visitor_client, amount=100)
    with at(2024, 12, 31, 23, 30):
        spend(online_client, old["code"], 30)
    with at(2025, 1, 31, 23, 30):  # 22:30 UTC: January's in Amsterdam
        new = buy_card(visitor_client, amount=50)
    with at(2025, 2, 10, 12):
        spent = spend(online_client, new["code"], 20)
        assert online_client.post(f"/v1.1/orders/{spent}/cancel").status_code == 200
    with at(2025, 3, 5, 12):
        services.adjust(card_id=old["giftCardId"], amount=Decimal(5), reason="Honoured", by=staff)
        services.adjust(card_id=new["giftCardId"], amount=Decimal(-10), reason="Torn", by=staff)
    return GiftCard.objects.get(pk=old["giftCardId"]), GiftCard.objects.get(pk=new["giftCardId"])


def test_the_liability_is_every_cards_ledger_to_that_day_split_active_and_expired(ledgers):
    old, new = ledgers
    assert old.expires_on == dt.date(2024, 12, 31)

    owed = reports.liability(day=dt.date(2025, 3, 10))

    assert (owed.active, owed.expired, owed.total) == (40, 75, 115)
    assert (owed.active_cards, owed.expired_cards) == (1, 1)
    # It reconciles: the sum of the balances, and issued − redeemed + credited ± adjusted.
    assert owed.total == old.balance() + new.balance()
    assert owed.by_kind == {"issued": 150, "redeemed": -50, "credited": 20, "adjusted": -5}
    assert owed.total == sum(owed.by_kind.values())


@pytest.mark.parametrize(
    ("day", "active", "expired"),
    [
        (dt.date(2024, 12, 30), 100, 0),
        (dt.date(2024, 12, 31), 70, 0),  # its last day: still spendable, 30 spent at 23:30
        (dt.date(2025, 1, 30), 0, 70),
        (dt.date(2025, 1, 31), 50, 70),  # issued at 23:30 that day, the museum's
        (dt.date(2025, 3, 4), 50, 70),
    ],
)
def test_at_an_earlier_day_it_is_what_the_ledgers_held_then(ledgers, day, active, expired):
    owed = reports.liability(day=day)

    assert (owed.active, owed.expired) == (active, expired)


def test_the_months_and_the_expired_years_in_the_museums_days(ledgers):
    months = reports.per_month(first=dt.date(2024, 12, 1), last=dt.date(2025, 3, 10))
    years = reports.expired_per_year(today=dt.date(2025, 3, 10))

    assert [
        (line.month, line.cards_issued, line.issued, line.redeemed, line.credited, line.adjusted)
        for line in months
    ] == [
        (dt.date(2024, 12, 1), 0, 0, -30, 0, 0),
        (dt.date(2025, 1, 1), 1, 50, 0, 0, 0),
        (dt.date(2025, 2, 1), 0, 0, -20, 20, 0),
        (dt.date(2025, 3, 1), 0, 0, 0, 0, -5),
    ]
    # The months since the first card add up to the liability now.
    since = reports.per_month(first=dt.date(2021, 1, 1), last=dt.date(2025, 3, 10))
    assert sum(line.net for line in since) == reports.liability(day=dt.date(2025, 3, 10)).total
    [expired] = years
    assert (expired.year, expired.cards, expired.at_expiry, expired.now) == (2024, 1, 70, 75)
    assert reports.expired_per_year(today=dt.date(2024, 12, 31)) == []


def test_each_report_is_one_query(ledgers, django_assert_num_queries):
    with django_assert_num_queries(1):
        reports.liability(day=dt.date(2025, 3, 10))
    with django_assert_num_queries(1):
        reports.per_month(first=dt.date(2021, 1, 1), last=dt.date(2025, 3, 10))
    with django_assert_num_queries(1):
        reports.expired_per_year(today=dt.date(2025, 3, 10))


def test_staff_read_them_beside_the_card_list_and_download_each_as_csv(
    ledgers, desk_client, django_assert_max_num_queries
):
    assert REPORTS in desk_client.get("/admin/giftcards/giftcard/").content.decode()
    query = "?day=2025-03-10&first=2024-12-01&last=2025-03-10"

    with django_assert_max_num_queries(10):  # the session, the account, and a query a report
        page = desk_client.get(REPORTS + query)

    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="liability"' in text and "115.00" in text and 'id="csv-expired"' in text
    answer = desk_client.get(REPORTS + query + "&format=csv&table=liability")
    assert answer["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.reader(StringIO(answer.content.decode())))
    assert rows == [
        ["Cards", "Number", "Balance (EUR)"],
        ["Spendable that day", "1", "40.00"],
        ["Expired by then", "1", "75.00"],
        ["Total", "2", "115.00"],
    ]
    months = desk_client.get(REPORTS + query + "&format=csv&table=months").content.decode()
    assert list(csv.reader(StringIO(months)))[-1] == [
        "Total",
        "1",
        "50.00",
        "-50.00",
        "20.00",
        "-5.00",
        "15.00",
    ]
    assert desk_client.get(REPORTS + query + "&format=csv&table=nothing").status_code == 404


def test_only_staff_who_may_view_cards_read_them(db):
    for user in (door_member(username="door"), UserFactory(is_staff=True)):
        client = Client()
        client.force_login(user)
        assert client.get(REPORTS).status_code == 403
