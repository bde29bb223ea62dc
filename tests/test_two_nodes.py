"""Two gunicorn nodes, one PostgreSQL database, one Redis: the rules hold across nodes.

Capacity lives in PostgreSQL rows, idempotency keys in a PostgreSQL table, throttles and
remembered credentials in Redis; nothing is kept in a node, so a client may meet either node on
each request.
"""

import datetime as dt
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from hours.models import MuseumDay
from museum.accounts import staff_group
from orders.models import Order, Ticket
from tests.factories import PASSWORD, MuseumDayFactory, SpecialEventFactory, UserFactory
from tests.live_http import call
from tests.servers import database_url, gunicorn_node

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]

REDIS_URL = "redis://127.0.0.1:6379/13"  # a database of its own, flushed before and after
THROTTLE_RATE = 20  # per minute and account, across both nodes


@pytest.fixture(scope="module")
def password_hash():
    # The nodes keep Django's default hasher, and this suite's MD5 is not in their list; one
    # PBKDF2 hash (about 0.3 s) serves every account, as they share the password.
    return PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())


@pytest.fixture(scope="module")
def nodes(django_db_setup, tmp_path_factory):
    """Two nodes sharing the test database and a Redis database; yields their URLs."""
    cache = redis.Redis.from_url(REDIS_URL)
    cache.flushdb()
    environment = {
        "DATABASE_URL": database_url(connection.settings_dict),
        "REDIS_URL": REDIS_URL,
        "MUSEUM_THROTTLE_USER_RATE": f"{THROTTLE_RATE}/min",
    }
    log = tmp_path_factory.mktemp("nodes") / "gunicorn.log"
    try:
        with gunicorn_node(environment=environment, log=log) as first:
            with gunicorn_node(environment=environment, log=log) as second:
                yield first, second
    finally:
        cache.flushdb()


@pytest.fixture(autouse=True)
def cache_of_this_database(nodes):
    """Each test's database is emptied behind the nodes' back (no signals), as a restore replaces
    one: the shared cache goes with it, as after a restore (docs/operations.md). Else the rows
    the nodes keep while its versions stand (museum/kept.py) would be an earlier test's."""
    redis.Redis.from_url(REDIS_URL).flushdb()


@pytest.fixture
def account(password_hash):
    def create(username: str) -> str:
        user = UserFactory(username=username)
        User.objects.filter(pk=user.pk).update(password=password_hash)
        return username

    return create


def in_parallel(calls: list) -> list:
    """Run the calls at the same moment, in threads; their answers in order."""
    start_together = threading.Barrier(len(calls), timeout=30)

    def run(call_once):
        start_together.wait()
        return call_once()

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))


def purchase(day: dt.date) -> dict:
    return {"ticketType": "general", "ticketDate": day.isoformat(), "email": "ada@example.com"}


def test_the_last_places_sell_once_across_both_nodes(nodes, account):
    buyer = account("buyer")
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2), capacity=5)
    # Sign in once: the credential is remembered in Redis for both nodes, so the parallel
    # purchases below race for places, not for the password hasher.
    assert call("GET", f"{nodes[0]}/v1.1/museum-hours", username=buyer).status == 200
    buy = [
        lambda url=nodes[number % 2]: call(
            "POST", f"{url}/v1.1/tickets", username=buyer, body=purchase(day.date)
        )
        for number in range(16)
    ]

    answers = in_parallel(buy)

    assert Counter(answer.status for answer in answers) == {201: 5, 409: 11}
    assert {answer.json()["reason"] for answer in answers if answer.status == 409} == {"sold_out"}
    assert Ticket.objects.count() == Order.objects.count() == 5
    assert MuseumDay.objects.get(pk=day.pk).sold == 5


def test_an_idempotency_key_holds_across_nodes(nodes, account):
    buyer = account("replayer")
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2))
    first, second = nodes

    def buy(url, key, body=None):
        body = body or purchase(day.date)
        return call("POST", f"{url}/v1.1/tickets", username=buyer, body=body, idempotency_key=key)

    bought = buy(first, "across-nodes")
    replayed = buy(second, "across-nodes")
    changed = buy(second, "across-nodes", {**purchase(day.date), "email": "other@example.com"})
    raced = in_parallel([lambda url=nodes[n % 2]: buy(url, "raced") for n in range(8)])

    assert bought.status == replayed.status == 201
    assert replayed.content == bought.content and replayed.headers["Idempotent-Replayed"] == "true"
    assert changed.status == 422 and changed.json()["code"] == "idempotency_key_reused"
    assert {answer.status for answer in raced} <= {201, 409}
    assert len({answer.content for answer in raced if answer.status == 201}) == 1
    assert Ticket.objects.count() == 2


def test_the_throttle_counts_requests_on_both_nodes(nodes, account):
    visitor = account("counted")

    answers = [
        call("GET", f"{nodes[number % 2]}/v1.1/museum-hours", username=visitor)
        for number in range(THROTTLE_RATE + 1)
    ]

    assert [answer.status for answer in answers] == [200] * THROTTLE_RATE + [429]
    assert [answer.headers["RateLimit-Remaining"] for answer in answers[-3:-1]] == ["1", "0"]
    refused = answers[-1]
    assert refused.content_type == "application/problem+json"
    assert 0 < int(refused.headers["Retry-After"]) <= 60


def test_an_event_edited_through_one_node_is_read_fresh_through_the_other(nodes, account):
    editor = account("editor")
    User.objects.get(username=editor).groups.add(staff_group())
    event = SpecialEventFactory(name="Night at the museum")
    path = f"/v1.1/special-events/{event.id}"
    # Read twice through the first node: the second answer comes from the shared cache.
    for _ in range(2):
        assert call("GET", nodes[0] + path, username=editor).json()["name"] == event.name

    edited = call("PATCH", nodes[1] + path, username=editor, body={"name": "Late opening"})

    assert edited.status == 200
    assert call("GET", nodes[0] + path, username=editor).json()["name"] == "Late opening"
