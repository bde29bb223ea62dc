"""Every channel meets the drop's gate: resellers through OCTO book their allocation, then queue
like anyone; the desk sells to the person in front of it."""

import datetime as dt

import pytest

from hours.models import MuseumDay
from tests.drops.conftest import make_drop
from tests.factories import MuseumDayFactory, UserFactory, partner_member
from tests.octo.conftest import octo_client, reserve_body, uid

pytestmark = pytest.mark.django_db


@pytest.fixture
def reseller(db):
    return octo_client(partner_member(username="reseller"))


def test_resellers_book_their_allocation_then_queue(drops_redis, drop_day, reseller):
    make_drop(drop_day, opens_in=-dt.timedelta(minutes=1), octo_allocation=3)
    booked = reseller.post(
        "/octo/bookings", reserve_body(drop_day.date, "adult", "adult"), format="json"
    )
    assert booked.status_code == 200, booked.json()
    beyond = reseller.post(
        "/octo/bookings",
        reserve_body(drop_day.date, "adult", "adult", uuid=uid("b-2")),
        format="json",
    )
    assert beyond.status_code == 400
    assert beyond.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "waiting room" in beyond.json()["errorMessage"]
    # What is left of the allocation still books.
    last = reseller.post(
        "/octo/bookings", reserve_body(drop_day.date, "adult", uuid=uid("b-3")), format="json"
    )
    assert last.status_code == 200, last.json()


def test_a_reseller_without_an_allocation_queues(drops_redis, drop_day, reseller):
    make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    refused = reseller.post("/octo/bookings", reserve_body(drop_day.date, "adult"), format="json")
    assert refused.status_code == 400
    assert "waiting room" in refused.json()["errorMessage"]


def test_a_paused_drop_answers_a_reseller_503(drops_redis, drop_day, reseller):
    make_drop(drop_day, opens_in=-dt.timedelta(minutes=1), octo_allocation=3)
    drops_redis.stop()
    paused = reseller.post("/octo/bookings", reserve_body(drop_day.date, "adult"), format="json")
    assert paused.status_code == 503
    assert paused["Retry-After"] == "5"


def test_staff_at_the_desk_sell_to_the_person_in_front_of_them(drops_redis, drop_day):
    make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    from orders.services.sale import place_order

    order = place_order(
        buyer=UserFactory(username="walk-in"),
        email="",
        ticket_type="general",
        ticket_date=drop_day.date,
        entry_time=dt.time(10),
        lines=[{"category": "adult", "quantity": 2}],
        seller=UserFactory(username="desk", is_staff=True),
    )
    assert order.tickets.count() == 2


def test_a_group_may_not_ask_for_a_drops_places(drops_redis, db):
    from drops.exceptions import QueueTokenRequired
    from groups.services.requests import request_group
    from tests.groups.conftest import ahead, school

    day = MuseumDayFactory(date=ahead(30), capacity=40)
    make_drop(day, opens_in=-dt.timedelta(minutes=1))
    with pytest.raises(QueueTokenRequired):
        request_group(account=None, **school(day.date, lines={"adult": 20}))
    assert MuseumDay.objects.get(pk=day.pk).sold == 0
