"""The local cache's request counter, the one a single process uses without REDIS_URL.

Redis's counter is exercised across two gunicorn nodes in tests/test_two_nodes.py.
"""

import pytest

from museum.cache import CountingLocMemCache


@pytest.fixture
def local_cache():
    local_cache = CountingLocMemCache("counting-test", {})
    yield local_cache
    local_cache.clear()  # caches of one name share their storage


def test_hits_are_counted_in_a_window_that_opens_at_the_first(local_cache):
    assert [local_cache.count("k", 60)[0] for _ in range(3)] == [1, 2, 3]
    assert local_cache.count("other", 60)[0] == 1


def test_the_count_is_the_value_others_read(local_cache):
    local_cache.count("k", 60)
    local_cache.count("k", 60)

    assert local_cache.get("k") == 2


def test_the_seconds_left_count_down_from_the_window_length(local_cache, monkeypatch):
    now = 1_000_000.0
    monkeypatch.setattr("museum.cache.time.time", lambda: now)
    assert local_cache.count("k", 60) == (1, 60)

    now += 45
    assert local_cache.count("k", 60) == (2, 15)


def test_a_closed_window_starts_again_from_one(local_cache):
    local_cache.count("k", 60)
    local_cache.delete("k")  # what the window's expiry does

    assert local_cache.count("k", 60)[0] == 1
