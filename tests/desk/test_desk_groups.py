"""Group sales at the front desk: a school class of 25 is sold through the desk's form, past the
API's MUSEUM_MAX_TICKETS_PER_ORDER, up to the desk's own MUSEUM_DESK_MAX_TICKETS_PER_ORDER."""

import pytest

from hours.models import MuseumDay
from museum.accounts import create_account
from museum.exceptions import InvalidInput
from orders.models import Order, OrderStatus
from orders.services.sale import place_order
from tests.conftest import client_for
from tests.factories import PASSWORD, MuseumDayFactory
from tests.orders.conftest import later, order_body


@pytest.fixture
def desk(client, db):
    client.force_login(create_account(username="desk1", password=PASSWORD, desk=True))
    return client


def class_sale(day, children: int, adults: int = 2) -> dict:
    return {
        "ticket_date": day.date.isoformat(),
        "qty_adult": str(adults),
        "qty_child": str(children),
        "payment": "card",
        "sell": "",
    }


def test_a_school_class_of_25_is_sold_at_the_desk(desk, settings):
    settings.MUSEUM_MAX_TICKETS_PER_ORDER = 20
    day = MuseumDayFactory(date=later())

    answer = desk.post("/desk/sell/", class_sale(day, children=23))

    order = Order.objects.get()
    assert answer.status_code == 302 and order.status == OrderStatus.CONFIRMED
    assert order.tickets.count() == 25 and MuseumDay.objects.get(pk=day.pk).sold == 25


def test_the_desk_prices_a_group_past_the_apis_limit(desk, settings):
    settings.MUSEUM_MAX_TICKETS_PER_ORDER = 20
    day = MuseumDayFactory(date=later())
    fields = class_sale(day, children=23)
    del fields["sell"]

    answer = desk.post("/desk/sell/", {**fields, "price": ""})

    assert b"Total: <strong>" in answer.content and b"At most" not in answer.content


def test_the_desk_refuses_an_order_past_its_own_limit(desk, settings):
    assert settings.MUSEUM_DESK_MAX_TICKETS_PER_ORDER == 200  # the default
    day = MuseumDayFactory(date=later())

    answer = desk.post("/desk/sell/", class_sale(day, children=199, adults=2))

    assert answer.status_code == 200 and b"At most 200 tickets per order." in answer.content
    assert not Order.objects.exists() and MuseumDay.objects.get(pk=day.pk).sold == 0


def test_the_api_keeps_its_own_limit_for_desk_staff_too(db, settings):
    settings.MUSEUM_MAX_TICKETS_PER_ORDER = 20
    day = MuseumDayFactory(date=later())
    staff = create_account(username="clerk", password=PASSWORD, desk=True)

    answer = client_for(staff).post(
        "/v1.1/orders", order_body(day.date, ("adult", 25)), format="json"
    )

    assert answer.status_code == 400 and "At most 20 tickets" in answer.json()["detail"]


def test_a_seller_without_the_desk_permission_gets_the_museums_limit(db, settings):
    settings.MUSEUM_MAX_TICKETS_PER_ORDER = 20
    day = MuseumDayFactory(date=later())
    visitor = create_account(username="ada", password=PASSWORD)

    with pytest.raises(InvalidInput):
        place_order(
            buyer=visitor,
            seller=visitor,
            email="",
            ticket_type="general",
            ticket_date=day.date,
            lines=[{"category": "adult", "quantity": 25}],
        )
