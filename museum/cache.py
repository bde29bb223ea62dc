"""A hit counter in the shared cache, in one round trip: what the rate limits count with.

Ours because Django's cache API has no such operation: it counts with add() then incr(), and
neither says when the key expires, which a window that opens at the first hit needs (for
Retry-After and RateLimit-Reset). With REDIS_URL the cache is django-redis's, and one Lua script
run through its raw client (`get_redis_connection`) counts and reads the expiry atomically for
every worker, by its SHA (EVALSHA: the script's text is sent once per server, not with every
count). Without it the cache is Django's LocMemCache, one process's memory.
"""

import functools
import time

from django.core.cache import caches
from django_redis import get_redis_connection
from django_redis.cache import RedisCache


def count(key: str, seconds: int, by: int = 1) -> tuple[int, float]:
    """`by` more hits on `key` in a window that opens at its first hit and lasts `seconds`:
    (hits in the window so far, seconds until it closes). The count is the key's value, an int,
    which `cache.get(key)` reads."""
    cache = caches["default"]
    if isinstance(cache, RedisCache):
        hits, milliseconds_left = _count_script(get_redis_connection("default"))(
            keys=[cache.make_key(key)], args=[seconds * 1000, by]
        )
        return hits, milliseconds_left / 1000
    return _count_in_this_process(cache, key, seconds, by)


# Atomic in Redis. A key left without an expiry (written by anything else) still gets one.
COUNT_SCRIPT = """
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
local milliseconds_left = redis.call('PTTL', KEYS[1])
if milliseconds_left < 0 then
  milliseconds_left = tonumber(ARGV[1])
  redis.call('PEXPIRE', KEYS[1], milliseconds_left)
end
return {hits, milliseconds_left}
"""


@functools.cache
def _count_script(client):
    # redis-py's Script: EVALSHA, loading the script again where the server lost it (a restart).
    return client.register_script(COUNT_SCRIPT)


def _count_in_this_process(cache, key: str, seconds: int, by: int) -> tuple[int, float]:
    # LocMemCache's incr holds its lock, so threads count exactly; when the window closes lives
    # beside the count.
    closes_at = time.time() + seconds
    if cache.add(key, 0, timeout=seconds):
        cache.set(f"{key}:closes-at", closes_at, timeout=seconds)
    try:
        hits = cache.incr(key, by)
    except ValueError:  # the window closed between add and incr
        return _count_in_this_process(cache, key, seconds, by)
    closes_at = cache.get(f"{key}:closes-at", closes_at)
    return hits, max(closes_at - time.time(), 0.001)
