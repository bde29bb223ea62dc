"""The shared cache's two backends, each with `count`: a request counter in one round trip.

Django's cache API counts with add() then incr(), and its Redis incr() asks whether the key
exists first: three round trips on every request a rate limit counts. `count` does it in one.

`ReusedClientRedisCache` is Django's Redis cache, keeping one redis-py client per connection pool.
Django's RedisCacheClient builds a new `redis.Redis` for every cache call, and redis-py (8.x)
fills a table of ~170 response callbacks each time it builds one: ~70 µs of CPU per call, several
calls per API request (the remembered credential, the throttle's read and write). A client holds
no state of its own besides its pool, and redis-py documents it as safe to share between threads,
so one per pool does the same work without the rebuilding. The pool still reconnects after a fork.
"""

import time

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class ReusedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient

    def count(self, key: str, seconds: int, by: int = 1) -> tuple[int, float]:
        """`by` more hits on `key` in a window that opens at its first hit and lasts `seconds`:
        (hits in the window so far, seconds until it closes)."""
        key = self.make_and_validate_key(key)
        client = self._cache.get_client(key, write=True)
        # One script, not a MULTI/EXEC pipeline: redis-py spends as long packing and parsing a
        # pipeline's five replies as it does on separate commands.
        hits, milliseconds_left = client.eval(COUNT_SCRIPT, 1, key, seconds * 1000, by)
        return hits, milliseconds_left / 1000


# Atomic in Redis. A key left without an expiry (written by anything else) still gets one.
# Milliseconds, so that a worker holding part of a window's allowance knows when it closes.
COUNT_SCRIPT = """
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
local milliseconds_left = redis.call('PTTL', KEYS[1])
if milliseconds_left < 0 then
  milliseconds_left = tonumber(ARGV[1])
  redis.call('PEXPIRE', KEYS[1], milliseconds_left)
end
return {hits, milliseconds_left}
"""


class CountingLocMemCache(LocMemCache):
    """Django's per-process cache (no REDIS_URL: one process, local work) with `count`."""

    def count(self, key: str, seconds: int, by: int = 1) -> tuple[int, float]:
        # The count itself is the key's value, an int, as in Redis; when the window closes
        # lives beside it.
        closes_at = time.time() + seconds
        if self.add(key, 0, timeout=seconds):
            self.set(f"{key}:closes-at", closes_at, timeout=seconds)
        try:
            hits = self.incr(key, by)
        except ValueError:  # the window closed between add and incr
            return self.count(key, seconds, by)
        closes_at = self.get(f"{key}:closes-at", closes_at)
        return hits, max(closes_at - time.time(), 0.001)
