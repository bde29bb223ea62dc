"""A sale that committed is answered as a success, whatever fails after the commit."""

import subprocess

import pytest
import redis
from django.db import connection

from orders.models import Order
from tests.orders.conftest import order_body
from tests.servers import free_port

pytestmark = pytest.mark.django_db(transaction=True)  # the sale's own transaction commits


@pytest.fixture
def own_redis(settings):
    """A Redis server of the test's own, as the shared cache, that the test can stop."""
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    for _ in range(200):  # up within a second or two; each ping waits for its answer
        try:
            client.ping()
            break
        except redis.ConnectionError:
            server.poll()
    url = f"redis://127.0.0.1:{port}/0"
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": url,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }
    settings.SHARED_CACHE = True
    yield server
    server.kill()
    server.wait()


@pytest.mark.needs_tool("redis-server")
def test_an_order_committed_before_the_cache_fails_is_answered_201_once(
    visitor_client, timed_day, own_redis
):
    def stop_redis_before_the_commit(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        # The sale's last statement enqueues its email; the commit and the after-commit cache
        # bump come next, with the cache gone.
        if sql.startswith("INSERT") and "dbtaskresult" in sql:
            own_redis.kill()
            own_redis.wait()
        return result

    with connection.execute_wrapper(stop_redis_before_the_commit):
        answer = visitor_client.post(
            "/v1.1/orders",
            order_body(timed_day.date, ("adult", 2), entryTime="10:30"),
            format="json",
        )

    assert own_redis.returncode is not None  # the cache was really gone at the commit
    assert answer.status_code == 201
    assert Order.objects.get().confirmation_code == answer.json()["confirmationCode"]
