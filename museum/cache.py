"""Django's Redis cache, keeping one redis-py client per connection pool.

Django's RedisCacheClient builds a new `redis.Redis` for every cache call, and redis-py (8.x)
fills a table of ~170 response callbacks each time it builds one: ~70 µs of CPU per call, several
calls per API request (the remembered credential, the throttle's read and write). A client holds
no state of its own besides its pool, and redis-py documents it as safe to share between threads,
so one per pool does the same work without the rebuilding. The pool still reconnects after a fork.
"""

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
