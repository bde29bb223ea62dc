"""A hit counter in the shared cache, in one round trip: what the rate limits count with.

Ours because Django's cache API has no such operation: it counts with add() then incr(), and
neither says when the key expires, which a window that opens at the first hit needs (for
Retry-After and RateLimit-Reset). With REDIS_URL the cache is django-redis's, and one Lua script
run through its raw client (`get_redis_connection`) counts and reads the expiry atomically for
every worker, by its SHA (EVALSHA: the script's text is sent once per server, not with every
count). Without it the cache is Django's LocMemCache, one process's memory.

`read_and_count` reads keys and counts a hit in that one round trip, where a count would otherwise
cost a signed-in request a round trip of its own. The script returns the values as Redis holds
them; django-redis's client decodes them as its own `get_many` does (`decode`, the method its
pluggable clients share). What a request's sign-in read that way is the request's (`read_along`,
a context variable that `request_reads` scopes to one request), so the code serving it
(`read`, `read_many`) reads those keys without a round trip of its own.
"""

import functools
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

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


_NOTHING_READ: Mapping[str, Any] = MappingProxyType({})
_read_along: ContextVar[Mapping[str, Any]] = ContextVar("museum_read_along", default=_NOTHING_READ)


@contextmanager
def request_reads() -> Iterator[None]:
    """What `read_along` is given while serving one request stays that request's (its context
    variable would otherwise outlive it in a worker's thread)."""
    token = _read_along.set(_NOTHING_READ)
    try:
        yield
    finally:
        _read_along.reset(token)


def read_along(values: Mapping[str, Any]) -> None:
    """The current request read these values (None where missing) in an earlier round trip, its
    sign-in's: `read` answers from them."""
    _read_along.set(values)


def read(key: str, read_already: Mapping[str, Any] | None = None) -> Any:
    """The value of `key` (None if missing): as this request read it already, in an earlier round
    trip (`read_already`, by default what it read along with its sign-in), else from the cache
    now."""
    return read_many([key], read_already)[key]


def read_many(keys: Sequence[str], read_already: Mapping[str, Any] | None = None) -> dict:
    """`read` for several keys: those not read already in one round trip."""
    if read_already is None:
        read_already = _read_along.get()
    missing = [key for key in keys if key not in read_already]
    found = caches["default"].get_many(missing) if missing else {}
    return {key: read_already[key] if key in read_already else found.get(key) for key in keys}


def read_and_count(
    keys: Sequence[str], *, counts: Mapping[str, int], if_present: str
) -> tuple[dict, dict[str, tuple[int, float]]]:
    """The values of `keys` (None where missing) and, if the key `if_present` has a value, one
    hit on each key of `counts` in a window of its seconds, as `count` makes it (hits, seconds
    left; none if not): one round trip with a shared cache."""
    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        values = cache.get_many(keys)
        found = {key: values.get(key) for key in keys}
        if found[if_present] is None:
            return found, {}
        return found, {key: count(key, seconds) for key, seconds in counts.items()}
    answer = _read_and_count_script(get_redis_connection("default"))(
        keys=[cache.make_key(key) for key in [*keys, *counts]],
        args=[len(keys), keys.index(if_present) + 1]
        + [seconds * 1000 for seconds in counts.values()],
    )
    values, counted = answer
    return (
        {
            key: None if value is None else cache.client.decode(value)
            for key, value in zip(keys, values, strict=True)
        },
        {
            key: (counted[2 * n], counted[2 * n + 1] / 1000)
            for n, key in enumerate(counts)
            if counted
        },
    )


# Atomic in Redis. A key left without an expiry (written by anything else) still gets one.
_COUNT = """
local function count(key, milliseconds, by)
  local hits = redis.call('INCRBY', key, by)
  local milliseconds_left = redis.call('PTTL', key)
  if milliseconds_left < 0 then
    milliseconds_left = milliseconds
    redis.call('PEXPIRE', key, milliseconds_left)
  end
  return {hits, milliseconds_left}
end
"""
COUNT_SCRIPT = _COUNT + "return count(KEYS[1], tonumber(ARGV[1]), ARGV[2])"
# KEYS: the keys read, then the ones counted. ARGV: how many are read, which read key must have a
# value, and each counted key's window in milliseconds.
READ_AND_COUNT_SCRIPT = (
    _COUNT
    + """
local read = tonumber(ARGV[1])
local values = redis.call('MGET', unpack(KEYS, 1, read))
local counted = {}
if values[tonumber(ARGV[2])] then
  for n = read + 1, #KEYS do
    local hits_and_left = count(KEYS[n], tonumber(ARGV[n - read + 2]), 1)
    table.insert(counted, hits_and_left[1])
    table.insert(counted, hits_and_left[2])
  end
end
return {values, counted}
"""
)


# redis-py's Script: EVALSHA, loading the script again where the server lost it (a restart).
@functools.cache
def _count_script(client):
    return client.register_script(COUNT_SCRIPT)


@functools.cache
def _read_and_count_script(client):
    return client.register_script(READ_AND_COUNT_SCRIPT)


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
