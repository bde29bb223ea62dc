"""A drop's places sell only to whom its line let in: one purchase per admission, tied to the
account, for a few minutes; a place that comes back lets the next in line in."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from hours.models import EntrySlot, MuseumDay
from orders.models import Order
from tests.conftest import assert_problem, client_for
from tests.drops.conftest import buyers, make_drop
from tests.factories import MuseumDayFactory, UserFactory
from tests.orders.conftest import order_body

pytestmark = pytest.mark.django_db


def join(user, drop):
    return client_for(user).post(f"/v1.1/drops/{drop.pk}/queue", {}, format="json")


def poll(user, drop):
    return client_for(user).get(f"/v1.1/drops/{drop.pk}/queue")


def buy(user, day, token=None, n=1, **extra):
    headers = {"Queue-Token": token} if token else {}
    body = order_body(day.date, ("adult", n), **extra)
    return client_for(user).post("/v1.1/orders", body, format="json", headers=headers)


def opened(day, **fields):
    """A drop whose sale opened a minute ago, letting one in a second."""
    return make_drop(day, opens_in=-dt.timedelta(minutes=1), **fields)


def test_joining_after_the_opening_is_first_come_first_served(drops_redis, drop_day):
    drop = opened(drop_day)
    people = buyers(3)
    with time_machine.travel(timezone.now(), tick=False):
        positions = [join(person, drop).json()["position"] for person in people]
    assert positions == [1, 2, 3]


def test_one_place_per_account_and_per_mailbox(drops_redis, drop_day):
    drop = opened(drop_day)
    first = UserFactory(username="ada", email="Ada.Lovelace+drop@gmail.com")
    same_mailbox = UserFactory(username="ada2", email="adalovelace@googlemail.com")
    assert join(first, drop).status_code == 201
    again = join(first, drop)  # a second tab
    assert again.status_code == 200
    assert again.json()["position"] == 1
    refused = join(same_mailbox, drop)
    assert_problem(refused, 409)
    assert refused.json()["code"] == "already_in_line"


def test_each_refusal_of_an_admission(drops_redis, drop_day):
    drop = opened(drop_day, admission_minutes=10)
    first, second, bystander = buyers(3)
    now = timezone.now()
    with time_machine.travel(now, tick=False):
        join(first, drop)
        join(second, drop)
    with time_machine.travel(now + dt.timedelta(seconds=3), tick=False):
        standing = poll(first, drop).json()
        assert standing["state"] == "admitted"
        token = standing["admission"]["token"]
        late_token = poll(second, drop).json()["admission"]["token"]

        without = buy(first, drop_day, entryTime="10:00")
        assert_problem(without, 403)
        assert without.json()["code"] == "queue_token_required"
        shared = buy(bystander, drop_day, token, entryTime="10:00")  # not theirs
        assert shared.json()["code"] == "queue_token_required"
        forged = buy(first, drop_day, token[:-2] + "xx", entryTime="10:00")
        assert forged.json()["code"] == "queue_token_required"
        too_many = buy(first, drop_day, token, n=5, entryTime="10:00")
        assert too_many.json()["code"] == "drop_max_tickets"

        bought = buy(first, drop_day, token, n=2, entryTime="10:00")
        assert bought.status_code == 201
        replayed = buy(first, drop_day, token, entryTime="10:00")
        assert_problem(replayed, 403)
        assert replayed.json()["code"] == "queue_token_used"
        assert poll(first, drop).json()["state"] == "used"
    with time_machine.travel(now + dt.timedelta(minutes=11), tick=False):
        expired = buy(second, drop_day, late_token, entryTime="10:00")
        assert_problem(expired, 403)
        assert expired.json()["code"] == "queue_token_expired"
        assert poll(second, drop).json()["state"] == "expired"
    assert Order.objects.count() == 1


def test_a_failed_purchase_gives_its_admission_back(drops_redis, drop_day):
    drop = opened(drop_day)
    (person,) = buyers(1)
    now = timezone.now()
    with time_machine.travel(now, tick=False):
        join(person, drop)
    with time_machine.travel(now + dt.timedelta(seconds=2), tick=False):
        token = poll(person, drop).json()["admission"]["token"]
        assert buy(person, drop_day, token, n=4, entryTime="10:00").status_code == 201
        # Sold out on the slot: the admission is still the buyer's, for another slot.
        refused = buy(person, drop_day, token, entryTime="10:00")
        assert refused.json()["code"] == "queue_token_used"


def test_a_sale_elsewhere_needs_no_admission(drops_redis, drop_day):
    opened(drop_day)
    other_day = MuseumDayFactory(date=drop_day.date + dt.timedelta(days=1), capacity=10)
    (person,) = buyers(1)
    assert buy(person, other_day).status_code == 201


def test_a_place_that_comes_back_goes_to_the_next_in_line(
    drops_redis, django_capture_on_commit_callbacks
):
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=4), capacity=2)
    drop = opened(day)
    first, second, third = buyers(3)
    now = timezone.now()
    with time_machine.travel(now, tick=False):
        for person in (first, second, third):
            join(person, drop)
    with time_machine.travel(now + dt.timedelta(seconds=5), tick=False):
        # Two places: two let in, the third waits however long it has been.
        assert [poll(p, drop).json()["state"] for p in (first, second, third)] == [
            "admitted",
            "admitted",
            "waiting",
        ]
        token = poll(first, drop).json()["admission"]["token"]
        with django_capture_on_commit_callbacks(execute=True):
            order = buy(first, day, token).json()
        assert MuseumDay.objects.get(pk=day.pk).sold == 1
    with time_machine.travel(now + dt.timedelta(seconds=10), tick=False):
        # One place left, the second still deciding: the third still waits.
        waiting = poll(third, drop).json()
        assert waiting["state"] == "waiting"
        assert waiting["likelySoldOut"] is True
        with django_capture_on_commit_callbacks(execute=True):
            cancelled = client_for(first).post(
                f"/v1.1/orders/{order['orderId']}/cancel", {}, format="json"
            )
        assert cancelled.status_code == 200
        # Nobody else may take it: the bystander has no admission.
        assert buy(UserFactory(username="quick"), day).json()["code"] == "queue_token_required"
    with time_machine.travel(now + dt.timedelta(seconds=11), tick=False):
        assert poll(third, drop).json()["state"] == "admitted"


def test_the_public_sees_none_of_a_drops_places_while_it_is_on(drops_redis, drop_day, client):
    other_day = MuseumDayFactory(date=drop_day.date + dt.timedelta(days=1))
    EntrySlot.objects.create(day=other_day, entry_time=dt.time(10), capacity=4)
    drop = opened(drop_day)
    (person,) = buyers(1)

    def available(day) -> list:
        answer = client_for(person).get(f"/v1.1/museum-hours/{day.date}/slots")
        return [slot["available"] for slot in answer.json()]

    assert available(drop_day) == [0, 0]  # the line's
    assert available(other_day) == [4]
    drop.closes_at = drop.opens_at + dt.timedelta(seconds=1)
    drop.save()
    assert available(drop_day) == [4, 4]
