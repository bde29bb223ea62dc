"""The visitor categories and the accounts' own limits are kept in each process while their
version in the shared cache stands: a sale reads neither, and a change by staff applies to the
next sale on every node (museum/kept.py). How long a change made behind Django's back may go
unseen is MUSEUM_RESPONSE_CACHE_SECONDS (the `response_cache` fixture: 600)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from orders.models import SaleLimits, Ticket, VisitorCategory
from orders.services.limits import OWN_LIMITS
from orders.services.pricing import ON_SALE, active_categories
from tests.conftest import cache_commands
from tests.factories import MuseumDayFactory
from tests.orders.conftest import later, order_body

TICKETS = "/v1.1/tickets"
pytestmark = pytest.mark.usefixtures("shared_redis_cache", "response_cache")


def buy(client, day):
    body = {"ticketType": "general", "ticketDate": day.isoformat(), "email": "ada@example.com"}
    return client.post(TICKETS, body, format="json")


def price_of(answer) -> Decimal:
    return Ticket.objects.get(pk=answer.json()["ticketId"]).price


def test_kept_rows_are_read_once_while_unchanged(db, django_assert_num_queries):
    with django_assert_num_queries(1):
        first = ON_SALE.get()
    with django_assert_num_queries(0):
        again = ON_SALE.get()

    assert again is first and set(first) == set(
        active_categories().values_list("category", flat=True)
    )


def test_a_price_staff_change_applies_to_the_next_sale_on_every_node(visitor_client):
    day = MuseumDayFactory(date=later()).date
    assert price_of(buy(visitor_client, day)) == Decimal("15.00")
    # What another process keeps: the same rows, under the version both read.
    other_node = type(ON_SALE)("visitor-categories", ON_SALE._load)
    assert other_node.get()["adult"].general_price == Decimal("15.00")

    adult = VisitorCategory.objects.get(category="adult")
    adult.general_price = Decimal("17.00")
    adult.save()  # as the admin saves it

    assert price_of(buy(visitor_client, day)) == Decimal("17.00")
    assert other_node.get()["adult"].general_price == Decimal("17.00")


def test_a_limit_staff_set_applies_to_the_next_sale(visitor_client, visitor):
    day = MuseumDayFactory(date=later()).date
    place = {"path": "/v1.1/orders", "format": "json"}
    assert visitor_client.post(data=order_body(day, ("adult", 5)), **place).status_code == 201
    assert OWN_LIMITS.get() == {}

    SaleLimits.objects.create(account=visitor, max_places_per_day=6)

    over = visitor_client.post(data=order_body(day, ("adult", 2)), **place)
    assert over.status_code == 429 and over.json()["limit"] == 6


def test_a_signed_in_purchase_is_one_cache_round_trip(visitor_client):
    # The sign-in's script reads the kept rows' versions with its own keys and counts the rates.
    day = MuseumDayFactory(date=later()).date
    for _ in range(2):  # the hasher's, then the account kept with the remembered credential
        assert buy(visitor_client, day).status_code == 201
    answers = []

    with CaptureQueriesContext(connection) as queries:
        assert cache_commands(lambda: answers.append(buy(visitor_client, day))) == ["EVALSHA"]

    assert answers[0].status_code == 201
    read = " ".join(query["sql"] for query in queries.captured_queries)
    assert "orders_visitorcategory" not in read and "orders_salelimits" not in read


def test_with_no_seconds_to_keep_the_rows_are_loaded_for_every_use(
    settings, django_assert_num_queries
):
    settings.MUSEUM_RESPONSE_CACHE_SECONDS = 0  # "0 keeps nothing", with the shared cache too
    assert ON_SALE.cache_reads() == []

    for _ in range(2):
        with django_assert_num_queries(1):
            assert cache_commands(ON_SALE.get) == []
