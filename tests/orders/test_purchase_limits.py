"""Each purchase mails an address its buyer chose: purchases have a rate of their own, and the
address must be at a domain name."""

import datetime as dt

import pytest
from django.utils import timezone

from orders.models import Order, Ticket
from tests.conftest import client_for
from tests.factories import MuseumDayFactory, UserFactory

TICKETS = "/v1.1/tickets"
PROBLEM = "application/problem+json"


@pytest.fixture
def open_day(db):
    return MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=3))


def buy(client, day, email="ada@example.com"):
    body = {"ticketType": "general", "ticketDate": day.date.isoformat(), "email": email}
    return client.post(TICKETS, body, format="json")


@pytest.fixture
def two_purchases_a_minute(settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**rates, "purchase": "2/min"},
    }


def test_an_account_over_its_purchase_rate_gets_429_and_no_ticket(
    visitor_client, open_day, two_purchases_a_minute
):
    first, second, third = (buy(visitor_client, open_day) for _ in range(3))

    assert first.status_code == second.status_code == 201
    assert third.status_code == 429 and third["Content-Type"] == PROBLEM
    assert third.json()["code"] == "throttled" and third.json()["status"] == 429
    assert 0 < int(third["Retry-After"]) <= 60
    # The headers describe the purchase limit, the one nearer to refusing.
    assert [first["RateLimit-Limit"], first["RateLimit-Remaining"]] == ["2", "1"]
    assert third["RateLimit-Remaining"] == "0"
    assert Ticket.objects.count() == Order.objects.count() == 2


def test_the_purchase_rate_is_per_account_and_counts_purchases_only(
    visitor_client, staff_client, open_day, two_purchases_a_minute
):
    for _ in range(2):
        assert buy(visitor_client, open_day).status_code == 201

    # Reading, and other accounts' purchases, go on.
    assert visitor_client.get("/v1.1/museum-hours").status_code == 200
    assert visitor_client.get(f"{TICKETS}/signing-key").status_code == 200
    assert buy(client_for(UserFactory(username="ada")), open_day).status_code == 201
    scan = staff_client.post(f"{TICKETS}/check-in", {"code": "ticket-x"}, format="json")
    assert scan.status_code == 404  # checked, not throttled
    assert buy(visitor_client, open_day).status_code == 429


def test_the_rate_limit_headers_of_a_purchase_describe_the_limit_nearer_to_refusing(
    visitor_client, open_day, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "3/min", "anon": "60/min", "purchase": "30/min"},
    }
    for _ in range(2):
        visitor_client.get("/v1.1/museum-hours")

    response = buy(visitor_client, open_day)

    assert response.status_code == 201
    assert [response["RateLimit-Limit"], response["RateLimit-Remaining"]] == ["3", "0"]


def test_the_default_purchase_rate_is_thirty_a_minute(visitor_client, open_day):
    response = buy(visitor_client, open_day)

    assert response.status_code == 201
    assert [response["RateLimit-Limit"], response["RateLimit-Remaining"]] == ["30", "29"]


@pytest.mark.parametrize(
    "email",
    [
        "ada@[127.0.0.1]",
        "ada@[::1]",
        "ada@[IPv6:::1]",
        "ada@127.0.0.1",
        "ada@[10.0.0.5]",
        "ada@localhost",
    ],
)
def test_an_address_at_an_ip_address_or_localhost_is_refused_by_name(
    visitor_client, open_day, email
):
    response = buy(visitor_client, open_day, email=email)

    assert response.status_code == 400 and response["Content-Type"] == PROBLEM
    assert list(response.json()["errors"]) == ["email"]
    assert not Ticket.objects.exists()


@pytest.mark.parametrize("email", ["ada@example.com", "ada+museum@mail.example.org"])
def test_an_address_at_a_domain_name_is_taken(visitor_client, open_day, email):
    response = buy(visitor_client, open_day, email=email)

    assert response.status_code == 201
    assert Ticket.objects.get().order.email == email
