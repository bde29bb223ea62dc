"""The counter in the shared cache: with django-redis, and in the LocMemCache one process uses
without REDIS_URL. The counter across two gunicorn nodes is exercised in tests/test_two_nodes.py."""

import uuid

import pytest
import redis
from django.core.cache import cache

from museum.cache import count, read_and_count


@pytest.fixture
def local_cache(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


@pytest.fixture
def redis_cache(settings):
    # A real Redis (database 8), under a key prefix of this test's own.
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/8",
            "KEY_PREFIX": f"test-{uuid.uuid4()}",
        }
    }
    try:
        cache.delete("k")
    except redis.ConnectionError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    yield
    cache.delete_many(["k", "other", "present", "absent"])


@pytest.fixture(params=["local_cache", "redis_cache"])
def counting_cache(request):
    request.getfixturevalue(request.param)


def test_hits_are_counted_in_a_window_that_opens_at_the_first(counting_cache):
    assert [count("k", 60)[0] for _ in range(3)] == [1, 2, 3]
    assert count("other", 60)[0] == 1


def test_a_count_can_take_several_hits_at_once(counting_cache):
    assert count("k", 60, by=10)[0] == 10
    assert count("k", 60, by=10)[0] == 20
    assert count("k", 60)[0] == 21


def test_the_count_is_the_value_others_read(counting_cache):
    count("k", 60)
    count("k", 60)

    assert cache.get("k") == 2


def test_the_window_closes_as_long_after_the_first_hit_as_asked(counting_cache):
    _, seconds_left = count("k", 60)
    assert 59 < seconds_left <= 60

    assert count("k", 60)[1] <= seconds_left  # the window did not move


def test_the_seconds_left_count_down_from_the_window_length(local_cache, monkeypatch):
    now = 1_000_000.0
    monkeypatch.setattr("museum.cache.time.time", lambda: now)
    assert count("k", 60) == (1, 60)

    now += 45
    assert count("k", 60) == (2, 15)


def test_a_closed_window_starts_again_from_one(counting_cache):
    count("k", 60)
    cache.delete("k")  # what the window's expiry does

    assert count("k", 60)[0] == 1


def test_read_and_count_reads_the_keys_and_counts_only_if_the_named_one_is_there(counting_cache):
    cache.set("present", {"a": [1, 2]})

    assert read_and_count(["absent", "present"], counts={"k": 60}, if_present="absent") == (
        {"absent": None, "present": {"a": [1, 2]}},
        {},
    )
    assert cache.get("k") is None
    values, counted = read_and_count(
        ["present", "absent"], counts={"k": 60, "other": 30}, if_present="present"
    )
    assert values == {"present": {"a": [1, 2]}, "absent": None}
    assert [counted["k"][0], counted["other"][0], cache.get("k"), cache.get("other")] == [
        1,
        1,
        1,
        1,
    ]
    assert 59 < counted["k"][1] <= 60
    assert 29 < counted["other"][1] <= 30


def test_read_and_count_counts_in_the_window_count_opened(counting_cache):
    cache.set("present", 7)
    count("k", 60, by=5)

    values, counted = read_and_count(["present"], counts={"k": 60}, if_present="present")

    assert values == {"present": 7}
    assert counted["k"][0] == 6
    assert count("k", 60)[0] == 7
