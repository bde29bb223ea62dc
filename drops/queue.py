"""The waiting room's line, in Redis: who joined, their places, who is let in, and the admissions
spent. Every step is one Lua script, run atomically by Redis for every worker at once, so ten
workers keep one line; the database is not asked (a poll costs one round trip).

Ours, not a library's: Queue-it and its kind are hosted services in front of a shop, and the
Python queue libraries (rq, django-tasks) run jobs, not lines of people; what a drop needs is a
few sorted sets and a counter, stepped in one place.

Keys, per drop (`{<pk>}` keeps them in one slot of a Redis cluster):
- `cfg`: what staff set (times in ms since the epoch, the outflow, the draw's seed), and `left`
  (places left, as the sale last counted them; drops/services.py writes it);
- `pre`: who joined before the sale opened (a set: no order among them);
- `line`: everyone's place (member -> position), drawn for `pre` at the opening;
- `state`: `opened`, `next` (the last place given), `cursor` (places up to it are let in; it
  moves at the outflow), `last` (when it last moved), `soldout`;
- `live`: those let in whose admission still runs (member -> when it runs out);
- `admitted`: when each was let in; `used`: whose admission bought;
- `mail`: mailbox -> member, so that one mailbox has one place.

Members are "a<account pk>". The cursor moves lazily, whenever anyone asks, by the outflow times
the time since it last moved, never past the last place given and never so far that those let in
and still deciding outnumber the places left: a place that comes back lets the next one in, and a
sale that ends with none left marks the drop sold out for everyone still waiting.
"""

import functools
from dataclasses import dataclass

import redis
from django.conf import settings

# The shared part of every script: the keys, the opening's draw, and moving the cursor.
_PRELUDE = """
local cfg, state, pre, line, live, admitted, used, mail =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local now = tonumber(ARGV[1])
local c = redis.call('HMGET', cfg, 'prequeue', 'opens', 'closes', 'rate', 'admit_ms', 'seed')
if not c[2] then return {'nocfg'} end
local prequeue, opens, closes = tonumber(c[1]), tonumber(c[2]), tonumber(c[3])
local rate, admit_ms, seed = tonumber(c[4]), tonumber(c[5]), tonumber(c[6])

-- At the opening, those who joined before it are drawn their places: a Fisher-Yates shuffle
-- with Park-Miller's generator (exact in Lua's doubles), seeded by the drop.
local function open_line()
  if now < opens or redis.call('HGET', state, 'opened') == '1' then return end
  local members = redis.call('SMEMBERS', pre)
  table.sort(members)
  local x = seed % 2147483646 + 1
  for i = #members, 2, -1 do
    x = (x * 48271) % 2147483647
    local j = x % i + 1
    members[i], members[j] = members[j], members[i]
  end
  for i = 1, #members do redis.call('ZADD', line, i, members[i]) end
  redis.call('DEL', pre)
  redis.call('HSET', state, 'opened', '1', 'next', tostring(#members), 'cursor', '0',
    'last', tostring(opens), 'soldout', '0')
end

-- Let in those the outflow reaches; returns them with their places.
local function advance()
  local newly = {}
  if redis.call('HGET', state, 'opened') ~= '1' then return newly end
  redis.call('ZREMRANGEBYSCORE', live, '-inf', now)
  local s = redis.call('HMGET', state, 'cursor', 'last', 'next', 'soldout')
  local cursor, last, nxt = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
  local left = tonumber(redis.call('HGET', cfg, 'left') or '-1')
  if s[4] == '1' or now >= closes or now <= last then return newly end
  if left == 0 then
    redis.call('HSET', state, 'soldout', '1')
    return newly
  end
  -- A few seconds' outflow at most per step: after a pause the line moves on at its pace
  -- rather than letting in at once all whom the pause held back.
  local elapsed = now - last
  if elapsed > 5000 then elapsed = 5000 end
  local reach = cursor + elapsed * rate / 60000
  if reach > nxt then reach = nxt end
  local from = math.floor(cursor) + 1
  if left > 0 then
    local room = left - redis.call('ZCARD', live)
    if room < 0 then room = 0 end
    if math.floor(reach) - from + 1 > room then reach = from - 1 + room end
  end
  if math.floor(reach) >= from then
    local ins = redis.call('ZRANGEBYSCORE', line, from, math.floor(reach), 'WITHSCORES')
    for i = 1, #ins, 2 do
      redis.call('ZADD', live, now + admit_ms, ins[i])
      redis.call('HSET', admitted, ins[i], tostring(now))
      newly[#newly + 1] = ins[i]
      newly[#newly + 1] = ins[i + 1]
    end
  end
  redis.call('HSET', state, 'cursor', tostring(reach), 'last', tostring(now))
  return newly
end

-- Where `m` stands: {state, position, cursor, left, deciding, runs_out}.
local function standing(m)
  if now >= closes then return {'closed'} end
  if redis.call('HGET', state, 'opened') ~= '1' then
    if redis.call('SISMEMBER', pre, m) == 1 then return {'pending'} end
    return {'none'}
  end
  local position = redis.call('ZSCORE', line, m)
  if not position then
    if redis.call('HGET', state, 'soldout') == '1' then return {'sold_out'} end
    return {'none'}
  end
  position = tonumber(position)
  local left = tonumber(redis.call('HGET', cfg, 'left') or '-1')
  local deciding = redis.call('ZCARD', live)
  local cursor = math.floor(tonumber(redis.call('HGET', state, 'cursor')))
  if redis.call('HEXISTS', used, m) == 1 then return {'used', position} end
  local runs_out = redis.call('ZSCORE', live, m)
  if runs_out then return {'admitted', position, cursor, left, deciding, tonumber(runs_out)} end
  if redis.call('HEXISTS', admitted, m) == 1 then return {'expired', position} end
  if redis.call('HGET', state, 'soldout') == '1' then return {'sold_out', position} end
  return {'waiting', position, cursor, left, deciding}
end

local function answer(st, newly, joined)
  return {st, newly, joined, rate, opens, tonumber(redis.call('HGET', cfg, 'max') or '0')}
end
"""

_STATUS = (
    _PRELUDE
    + """
open_line()
local newly = advance()
return answer(standing(ARGV[2]), newly, 0)
"""
)

# ARGV: now, member, mailbox ('' for none). Joined: 1 if this call gave the place.
_JOIN = (
    _PRELUDE
    + """
local m, mailbox = ARGV[2], ARGV[3]
if now >= closes then return answer({'closed'}, {}, 0) end
if now < prequeue then return answer({'not_open'}, {}, 0) end
if mailbox ~= '' then
  local owner = redis.call('HGET', mail, mailbox)
  if owner and owner ~= m then return answer({'mailbox_taken'}, {}, 0) end
end
open_line()
local newly = advance()
local joined = 0
if redis.call('HGET', state, 'opened') ~= '1' then
  joined = redis.call('SADD', pre, m)
elseif not redis.call('ZSCORE', line, m) and redis.call('HGET', state, 'soldout') ~= '1' then
  local position = redis.call('HINCRBY', state, 'next', 1)
  redis.call('ZADD', line, position, m)
  joined = 1
end
if joined == 1 and mailbox ~= '' then redis.call('HSET', mail, mailbox, m) end
return answer(standing(m), newly, joined)
"""
)

# ARGV: now, member. Spends `m`'s admission: 'ok', or why not.
_SPEND = (
    _PRELUDE
    + """
local m = ARGV[2]
if redis.call('HEXISTS', used, m) == 1 then return 'used' end
local runs_out = redis.call('ZSCORE', live, m)
if not runs_out then
  if redis.call('HEXISTS', admitted, m) == 1 then return 'expired' end
  return 'required'
end
if tonumber(runs_out) <= now then return 'expired' end
redis.call('HSET', used, m, runs_out)
redis.call('ZREM', live, m)
return 'ok'
"""
)

# ARGV: now, member. Gives back an admission whose sale failed, while it still runs.
_UNSPEND = (
    _PRELUDE
    + """
local m = ARGV[2]
local runs_out = redis.call('HGET', used, m)
if not runs_out then return 0 end
redis.call('HDEL', used, m)
if tonumber(runs_out) > now then redis.call('ZADD', live, runs_out, m) end
return 1
"""
)

# ARGV: now, n, allocation. Takes n of the resellers' allocation: 1, or 0 if it has not enough.
_TAKE_ALLOCATION = """
local taken = tonumber(redis.call('HGET', KEYS[1], 'octo') or '0')
if taken + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'octo', ARGV[2])
return 1
"""


class Unreachable(Exception):
    """Redis did not answer: the drop pauses (drops.exceptions.QueuePaused)."""


@functools.cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(
        url,
        socket_timeout=settings.MUSEUM_DROP_REDIS_TIMEOUT,
        socket_connect_timeout=settings.MUSEUM_DROP_REDIS_TIMEOUT,
        decode_responses=True,
    )


def client() -> redis.Redis:
    url = settings.MUSEUM_DROP_REDIS_URL
    if not url:
        raise Unreachable("MUSEUM_DROP_REDIS_URL is not set")
    try:
        return _client(url)
    except ValueError as error:  # not a Redis URL: no line can be kept
        raise Unreachable(str(error)) from error


def _script(text: str):
    """The script, registered with the drops' Redis (sent by its SHA, its text only once)."""
    return _scripts(text, client())


@functools.cache
def _scripts(text: str, redis_client: redis.Redis):
    return redis_client.register_script(text)


def _keys(drop_id: int) -> list[str]:
    base = f"museum:drop:{{{drop_id}}}:"
    return [
        base + name for name in ("cfg", "state", "pre", "line", "live", "admitted", "used", "mail")
    ]


def _run(text: str, drop_id: int, *args):
    script = _script(text)
    try:
        return script(keys=_keys(drop_id), args=list(args))
    except redis.RedisError as error:
        raise Unreachable(str(error)) from error


@dataclass(frozen=True)
class Standing:
    """Where a member stands in a drop's line (`state`: none, pending, waiting, admitted, used,
    expired, sold_out, closed)."""

    state: str
    position: int | None = None
    cursor: int = 0
    left: int = -1  # unknown
    deciding: int = 0  # let in, still deciding
    runs_out_ms: int | None = None

    @classmethod
    def read(cls, row: list) -> "Standing":
        state, *rest = row
        return cls(state, *(int(value) for value in rest))


@dataclass(frozen=True)
class Step:
    """A script's answer: the member's standing, who it let in ((member, position) pairs),
    whether it gave the member a place, and the drop's settings a poll's answer tells."""

    standing: Standing
    newly: list[tuple[str, int]]
    joined: bool
    rate: int
    opens_ms: int
    max_tickets: int


def _step(answer) -> Step | None:
    if answer == ["nocfg"]:
        return None
    standing, newly, joined, rate, opens_ms, max_tickets = answer
    pairs = [(newly[i], int(newly[i + 1])) for i in range(0, len(newly), 2)]
    return Step(Standing.read(standing), pairs, bool(joined), rate, opens_ms, max_tickets)


def configure(drop_id: int, values: dict, *, seed: int) -> None:
    """Write what staff set (and the places left) for the scripts; the seed once (a draw
    already made keeps its own)."""
    try:
        with client().pipeline() as pipe:
            pipe.hset(_keys(drop_id)[0], mapping=values)
            pipe.hsetnx(_keys(drop_id)[0], "seed", seed)
            pipe.execute()
    except redis.RedisError as error:
        raise Unreachable(str(error)) from error


def set_left(drop_id: int, left: int) -> None:
    try:
        client().hset(_keys(drop_id)[0], "left", left)
    except redis.RedisError as error:
        raise Unreachable(str(error)) from error


def status(drop_id: int, member: str, now_ms: int) -> Step | None:
    """None: the drop is not configured in Redis (never, or Redis lost it)."""
    return _step(_run(_STATUS, drop_id, now_ms, member))


def join(drop_id: int, member: str, mailbox: str, now_ms: int) -> Step | None:
    return _step(_run(_JOIN, drop_id, now_ms, member, mailbox))


def spend(drop_id: int, member: str, now_ms: int) -> str | None:
    answer = _run(_SPEND, drop_id, now_ms, member)
    return None if answer == ["nocfg"] else answer


def unspend(drop_id: int, member: str, now_ms: int) -> None:
    _run(_UNSPEND, drop_id, now_ms, member)


def take_allocation(drop_id: int, n: int, allocation: int) -> bool:
    script = _script(_TAKE_ALLOCATION)
    try:
        return bool(script(keys=[_keys(drop_id)[1]], args=[0, n, allocation]))
    except redis.RedisError as error:
        raise Unreachable(str(error)) from error


def give_back_allocation(drop_id: int, n: int) -> None:
    try:
        client().hincrby(_keys(drop_id)[1], "octo", -n)
    except redis.RedisError as error:
        raise Unreachable(str(error)) from error


def sold_out(drop_id: int) -> bool:
    """Whether the line has told those still waiting that the places are gone: from then on, a
    place that comes back is the waiting list's."""
    try:
        return client().hget(_keys(drop_id)[1], "soldout") == "1"
    except redis.RedisError as error:
        raise Unreachable(str(error)) from error


def waiting(drop_id: int) -> int:
    """How many are in line and not yet let in (for /metrics)."""
    try:
        keys = _keys(drop_id)
        with client().pipeline() as pipe:
            pipe.scard(keys[2])
            pipe.zcard(keys[3])
            pipe.hget(keys[1], "cursor")
            before, in_line, cursor = pipe.execute()
    except redis.RedisError as error:
        raise Unreachable(str(error)) from error
    return before + max(in_line - int(float(cursor or 0)), 0)


def forget(drop_id: int) -> None:
    """Delete the drop's line (a deleted drop's, or tests')."""
    try:
        client().delete(*_keys(drop_id))
    except redis.RedisError as error:
        raise Unreachable(str(error)) from error
