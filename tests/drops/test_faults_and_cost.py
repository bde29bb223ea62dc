"""A drop fails closed: Redis away pauses it (no sale, 503 with Retry-After) and it resumes where
it stood; and a poll costs no database query."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from orders.models import Order
from tests.conftest import assert_problem, client_for
from tests.drops.conftest import buyers, make_drop
from tests.orders.conftest import order_body

pytestmark = pytest.mark.django_db


def test_redis_stopped_mid_drop_pauses_it_and_it_resumes_where_it_stood(drops_redis, drop_day):
    drop = make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    people = buyers(4)
    now = timezone.now()
    url = f"/v1.1/drops/{drop.pk}/queue"
    with time_machine.travel(now, tick=False):
        for person in people:
            client_for(person).post(url, {}, format="json")
    with time_machine.travel(now + dt.timedelta(seconds=2), tick=False):
        before = [client_for(person).get(url).json() for person in people]
    assert [place["state"] for place in before] == ["admitted", "admitted", "waiting", "waiting"]
    token = before[0]["admission"]["token"]
    body = order_body(drop_day.date, ("adult", 2), entryTime="10:00")

    drops_redis.stop()
    with time_machine.travel(now + dt.timedelta(seconds=3), tick=False):
        for answer in (
            client_for(people[2]).get(url),
            client_for(people[0]).post(
                "/v1.1/orders", body, format="json", headers={"Queue-Token": token}
            ),
            client_for(buyers(1, "late")[0]).post(url, {}, format="json"),
        ):
            assert_problem(answer, 503)
            assert answer.json()["code"] == "queue_paused"
            assert answer["Retry-After"] == "5"
    assert not Order.objects.exists()

    drops_redis.start()  # from its append-only file
    with time_machine.travel(now + dt.timedelta(seconds=4), tick=False):
        after = [client_for(person).get(url).json() for person in people]
        assert [place["position"] for place in after] == [place["position"] for place in before]
        bought = client_for(people[0]).post(
            "/v1.1/orders", body, format="json", headers={"Queue-Token": token}
        )
    assert bought.status_code == 201
    assert Order.objects.get().tickets.count() == 2


def test_a_poll_asks_the_database_nothing(
    drops_redis, drop_day, shared_redis_cache, django_assert_num_queries
):
    drop = make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    (person,) = buyers(1)
    client = client_for(person)
    url = f"/v1.1/drops/{drop.pk}/queue"
    assert client.post(url, {}, format="json").status_code == 201  # signs in: the hasher
    client.get(url)  # the account, loaded once and kept with the credential
    with django_assert_num_queries(0):
        answer = client.get(url)
    assert answer.status_code == 200
    assert answer.json()["position"] == 1
    assert answer["Cache-Control"] == "private, max-age=1"
    assert int(answer["Retry-After"]) == answer.json()["pollAfterSeconds"] > 0


def test_without_a_redis_for_drops_a_drop_pauses_and_an_unknown_one_is_not_found(
    drop_day, settings
):
    settings.MUSEUM_DROP_REDIS_URL = ""
    drop = make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    (person,) = buyers(1)
    client = client_for(person)
    paused = client.post(f"/v1.1/drops/{drop.pk}/queue", {}, format="json")
    assert assert_problem(paused, 503)["code"] == "queue_paused"
    assert_problem(client.get(f"/v1.1/drops/{drop.pk + 1}/queue"), 404)
    assert_problem(client.get(f"/v1.1/drops/{drop.pk + 1}/waiting-list"), 404)
    # Its places do not sell: closed, whatever the line would say.
    body = order_body(drop_day.date, ("adult", 1), entryTime="10:00")
    refused = client.post("/v1.1/orders", body, format="json")
    assert assert_problem(refused, 403)["code"] == "queue_token_required"


@pytest.mark.parametrize("path", ["queue", "waiting-list"])
def test_a_drop_id_no_key_can_hold_is_not_found(path, db):
    (person,) = buyers(1)
    answer = client_for(person).get(f"/v1.1/drops/4315162339715455117725195072176128/{path}")
    assert_problem(answer, 404)
