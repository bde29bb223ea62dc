"""The shared cache's backends: Redis's, and the local one a single process uses without REDIS_URL.
The counter across two gunicorn nodes is exercised in tests/test_two_nodes.py."""

import uuid

import pytest
import redis

from museum.cache import CountingLocMemCache, ReusedClientRedisCache


@pytest.fixture
def local_cache():
    local_cache = CountingLocMemCache("counting-test", {})
    yield local_cache
    local_cache.clear()  # caches of one name share their storage


@pytest.fixture
def redis_cache():
    # A real Redis when there is one (the benchmark's database, under a key prefix of our own).
    redis_cache = ReusedClientRedisCache(
        "redis://127.0.0.1:6379/14", {"KEY_PREFIX": f"test-{uuid.uuid4()}", "TIMEOUT": 60}
    )
    try:
        redis_cache.delete("k")
    except redis.ConnectionError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    yield redis_cache
    redis_cache.delete_many(["k", "other", "credential"])


def test_the_redis_cache_keeps_one_client_for_every_call(redis_cache):
    redis_cache.set("credential", {"user_id": 7})

    assert redis_cache.get("credential") == {"user_id": 7}
    assert redis_cache._cache.get_client(write=False) is redis_cache._cache.get_client(write=True)
    redis_cache.delete("credential")
    assert redis_cache.get("credential") is None


@pytest.fixture(params=["local_cache", "redis_cache"])
def counting_cache(request):
    return request.getfixturevalue(request.param)


def test_hits_are_counted_in_a_window_that_opens_at_the_first(counting_cache):
    assert [counting_cache.count("k", 60)[0] for _ in range(3)] == [1, 2, 3]
    assert counting_cache.count("other", 60)[0] == 1


def test_a_count_can_take_several_hits_at_once(counting_cache):
    assert counting_cache.count("k", 60, by=10)[0] == 10
    assert counting_cache.count("k", 60, by=10)[0] == 20
    assert counting_cache.count("k", 60)[0] == 21


def test_the_count_is_the_value_others_read(counting_cache):
    counting_cache.count("k", 60)
    counting_cache.count("k", 60)

    assert counting_cache.get("k") == 2


def test_the_window_closes_as_long_after_the_first_hit_as_asked(counting_cache):
    _, seconds_left = counting_cache.count("k", 60)
    assert 59 < seconds_left <= 60

    assert counting_cache.count("k", 60)[1] <= seconds_left  # the window did not move


def test_the_seconds_left_count_down_from_the_window_length(local_cache, monkeypatch):
    now = 1_000_000.0
    monkeypatch.setattr("museum.cache.time.time", lambda: now)
    assert local_cache.count("k", 60) == (1, 60)

    now += 45
    assert local_cache.count("k", 60) == (2, 15)


def test_a_closed_window_starts_again_from_one(counting_cache):
    counting_cache.count("k", 60)
    counting_cache.delete("k")  # what the window's expiry does

    assert counting_cache.count("k", 60)[0] == 1
