"""bench.drop's crowd: thousands of buyers in one asyncio process sharing a bounded pool of
connections (aiohttp), each from an address of its own behind one proxy (X-Forwarded-For), and the
figures made of what they saw.

Two ways in: `wait_in_line` (a drop's waiting room: join, poll as told, buy when admitted, give up
when told it is sold out) and `rush` (no waiting room: buy at the opening, retrying a couple of
times on errors and timeouts, giving up when sold out). Both buy through `buy`, with an
Idempotency-Key, so that a retry after a timeout never buys twice.
"""

import asyncio
import base64
import json
import math
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import aiohttp

ORDERS = "/v1.1/orders"
POLL_TIMEOUT = 30  # s: a status that slow counts as a timeout
PURCHASE_TIMEOUT = 10  # s: a buyer without an answer by then retries (with the same key)
RETRIES = 2  # after an error or a timeout, a buyer tries again this many times
BACKOFF_CAP = 30  # s: the longest a buyer waits before asking again after no answer
# Answers after which a buyer in line stops waiting.
GIVE_UP = {"sold_out", "closed", "expired", "used"}


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (share 0.5: the median); nan without values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1))
    return ordered[rank]


def ranks(values: Sequence[float]) -> list[float]:
    """Each value's rank from 1, tied values sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=values.__getitem__)
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for index in order[start : end + 1]:
            result[index] = (start + end) / 2 + 1
        start = end + 1
    return result


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (ties ranked by their mean); nan when either side has fewer
    than two values or no spread."""
    if len(xs) != len(ys):
        raise ValueError("spearman() needs as many xs as ys")
    if len(xs) < 2:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mean = (len(xs) + 1) / 2  # of any ranks from 1 to n, ties or not
    covariance = sum((a - mean) * (b - mean) for a, b in zip(rx, ry, strict=True))
    spread = math.sqrt(sum((a - mean) ** 2 for a in rx) * sum((b - mean) ** 2 for b in ry))
    return covariance / spread if spread else float("nan")


def arrival_fairness(arrivals: Sequence[float], served: Sequence[bool]) -> tuple[float, float]:
    """Spearman's ρ between when buyers arrived and their missing out, and what it would be had
    the earliest arrivals been served (first come, first served: the most a sale can reach with
    that many served). A lottery among everyone gives about 0."""
    missed = [0 if got else 1 for got in served]
    fifo = [1] * len(arrivals)
    for index in sorted(range(len(arrivals)), key=arrivals.__getitem__)[: sum(served)]:
        fifo[index] = 0
    return spearman(arrivals, missed), spearman(arrivals, fifo)


def arrivals(
    count: int, *, rng: random.Random, before: float, after: float, share_before: float
) -> list[float]:
    """When each buyer arrives, in seconds from the opening: `share_before` of them spread
    evenly at random over the `before` seconds before it, the others over the `after` after."""
    early = round(count * share_before)
    times = [-before + rng.random() * before for _ in range(early)]
    times += [rng.random() * after for _ in range(count - early)]
    rng.shuffle(times)
    return times


def address(n: int) -> str:
    """Buyer n's address, as the proxy in front would name it (10.0.0.0/8)."""
    return f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


@dataclass
class Buyer:
    n: int
    username: str
    authorization: str
    arrives: float  # s from the opening
    wants: int  # tickets
    joined_at: float | None = None  # s from the opening, answered
    position: int | None = None
    admitted_at: float | None = None  # s from the opening, by the server's clock
    seen_admitted_at: float | None = None  # s from the opening, when this buyer first saw it
    bought: int = 0
    bought_at: float | None = None
    outcome: str = ""  # bought, sold_out, ..., or what stopped it
    done_at: float | None = None


@dataclass(frozen=True)
class Answer:
    status: int | None  # None: no answer (a timeout, a refused connection)
    body: dict
    retry_after: float | None

    @property
    def code(self) -> str:
        """The problem's code, or the state a drop's status says."""
        return str(self.body.get("code") or self.body.get("state") or "")


@dataclass
class Tally:
    """Every request of a crowd, by kind (join, poll, purchase, sign-in)."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    # (kind, status or the error's name, the problem's code) -> requests
    answers: Counter = field(default_factory=Counter)

    def requests(self, kind: str | None = None) -> int:
        return sum(n for (k, _, _), n in self.answers.items() if kind in (None, k))

    def server_errors(self) -> int:
        return sum(n for (_, s, _), n in self.answers.items() if isinstance(s, int) and s >= 500)

    def failures(self, name: str | None = None) -> int:
        """Requests without an answer: timeouts, refused connections (of `name`, or all)."""
        return sum(
            n for (_, s, _), n in self.answers.items() if isinstance(s, str) and name in (None, s)
        )

    def summary(self) -> str:
        return ", ".join(
            f"{k} {s}{' ' + c if c else ''}: {n}" for (k, s, c), n in self.answers.items()
        )


def _parse(text: bytes) -> dict:
    try:
        body = json.loads(text)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class Crowd:
    """What the buyers share: the connections, the clock (`opening`: time.monotonic()'s at the
    opening, `opening_at` the server's), the tally, and when they stop (`deadline`, seconds after
    the opening)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        base: str,
        day: date,
        run: str,
        opening: float,
        opening_at: datetime,
        deadline: float = math.inf,
    ):
        self.session, self.base, self.day, self.run = session, base, day, run
        self.opening, self.opening_at, self.deadline = opening, opening_at, deadline
        self.tally = Tally()
        self.rng = random.Random(run)

    def backoff(self, failures: int) -> float:
        """How long a buyer waits before asking again after `failures` requests in a row went
        unanswered: doubling from a second, jittered, as a well-behaved client does, so that an
        overloaded server is not asked all the more."""
        return min(BACKOFF_CAP, 2 ** (failures - 1)) * self.rng.uniform(0.5, 1.5)

    def now(self) -> float:
        return time.monotonic() - self.opening

    def over(self) -> bool:
        return self.now() > self.deadline

    async def until(self, offset: float) -> None:
        delay = offset - self.now()
        if delay > 0:
            await asyncio.sleep(delay)

    async def call(
        self, kind: str, method: str, path: str, buyer: Buyer, *, timeout: float, **options
    ) -> Answer:
        headers = {"Authorization": buyer.authorization, "X-Forwarded-For": address(buyer.n)}
        headers.update(options.pop("headers", {}))
        started = time.monotonic()
        try:
            async with self.session.request(
                method,
                self.base + path,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
                **options,
            ) as response:
                text = await response.read()
                status, retry_after = response.status, response.headers.get("Retry-After")
        except TimeoutError:
            self.tally.answers[kind, "timeout", ""] += 1
            return Answer(None, {}, None)
        except aiohttp.ClientError as error:
            self.tally.answers[kind, type(error).__name__, ""] += 1
            return Answer(None, {}, None)
        self.tally.latencies.setdefault(kind, []).append(time.monotonic() - started)
        answer = Answer(status, _parse(text), _seconds(retry_after))
        self.tally.answers[kind, status, answer.code] += 1
        return answer

    def order(self, buyer: Buyer, quantity: int) -> dict:
        return {
            "ticketType": "general",
            "ticketDate": self.day.isoformat(),
            "email": f"{buyer.username}@bench.invalid",  # the account's own (bench.drop)
            "lines": [{"category": "adult", "quantity": quantity}],
        }


def finish(crowd: Crowd, buyer: Buyer, outcome: str) -> None:
    buyer.outcome, buyer.done_at = outcome, crowd.now()


async def buy(crowd: Crowd, buyer: Buyer, *, token: str | None = None, most: int = 0) -> None:
    """One purchase: `wants` tickets (at most `most`), fewer when 409 `sold_out` says how many
    are left, again after an error or a timeout (RETRIES times) or when told to retry later."""
    quantity, failures = min(buyer.wants, most or buyer.wants), 0
    while not crowd.over():
        headers = {"Idempotency-Key": f"{crowd.run}-{buyer.n}-{quantity}"}
        if token:
            headers["Queue-Token"] = token
        answer = await crowd.call(
            "purchase",
            "POST",
            ORDERS,
            buyer,
            json=crowd.order(buyer, quantity),
            headers=headers,
            timeout=PURCHASE_TIMEOUT,
        )
        if answer.status == 201:
            buyer.bought, buyer.bought_at = quantity, crowd.now()
            return finish(crowd, buyer, "bought")
        left = answer.body.get("available") or 0
        if answer.code == "sold_out" and 0 < left < quantity:
            quantity = left
        elif answer.code == "sold_out":
            return finish(crowd, buyer, "sold_out")
        elif answer.retry_after is not None and answer.status in (409, 429, 503):
            await asyncio.sleep(answer.retry_after)  # a retry the service asked for
        elif answer.status is None or answer.status >= 500:
            failures += 1
            if failures > RETRIES:
                return finish(crowd, buyer, "errors")
            await asyncio.sleep(crowd.backoff(failures))
        else:
            return finish(crowd, buyer, f"purchase {answer.status} {answer.code}")
    finish(crowd, buyer, "unfinished")


async def rush(crowd: Crowd, buyer: Buyer) -> None:
    """No waiting room: whoever arrived before the opening buys at it, the others on arrival."""
    await crowd.until(max(buyer.arrives, 0))
    await buy(crowd, buyer)


def note(crowd: Crowd, buyer: Buyer, body: dict, *, admission_minutes: int) -> str:
    """What a status says about the buyer: its position, when it was admitted."""
    if buyer.position is None and body.get("position") is not None:
        buyer.position = body["position"]
    state = str(body.get("state"))
    admission = body.get("admission")
    if state == "admitted" and admission and buyer.seen_admitted_at is None:
        buyer.seen_admitted_at = crowd.now()
        # The token lasts admission_minutes from the admission: the server's own moment.
        expires = datetime.fromisoformat(admission["expiresAt"].replace("Z", "+00:00"))
        admitted = expires - timedelta(minutes=admission_minutes)
        buyer.admitted_at = (admitted - crowd.opening_at).total_seconds()
    return state


async def wait_in_line(crowd: Crowd, buyer: Buyer, *, path: str, admission_minutes: int) -> None:
    """Join the drop's line on arrival, poll as the status says, buy when admitted."""
    await crowd.until(buyer.arrives)
    kind, method, failures = "join", "POST", 0
    while not crowd.over():
        answer = await crowd.call(
            kind, method, path, buyer, timeout=POLL_TIMEOUT, json={} if kind == "join" else None
        )
        if answer.status in (200, 201):
            if buyer.joined_at is None:
                buyer.joined_at = crowd.now()
            state = note(crowd, buyer, answer.body, admission_minutes=admission_minutes)
            if state == "admitted":
                admission = answer.body["admission"]
                return await buy(
                    crowd, buyer, token=admission["token"], most=admission["maxTickets"]
                )
            if state in GIVE_UP:
                return finish(crowd, buyer, state)
            kind, method, failures = "poll", "GET", 0
            wait = answer.body.get("pollAfterSeconds") or answer.retry_after or 1
        elif _worth_retrying(answer):
            failures += 1
            wait = answer.retry_after or crowd.backoff(failures)
        else:
            return finish(crowd, buyer, f"{kind} {answer.status} {answer.code}")
        await asyncio.sleep(wait)
    finish(crowd, buyer, "unfinished")


def _worth_retrying(answer: Answer) -> bool:
    """No answer, a server error, a limit, or a line not open yet: ask again a bit later."""
    return (
        answer.status is None
        or answer.status >= 500
        or answer.status == 429
        or answer.code == "queue_not_open"
    )


Flow = Callable[[Crowd, Buyer], Awaitable[None]]


async def run(flow: Flow, buyers: Sequence[Buyer], *, connections: int, **clock) -> Tally:
    """Every buyer's `flow` at once on one pool of `connections`; what they were answered.
    `clock`: the Crowd's arguments but its session."""
    connector = aiohttp.TCPConnector(limit=connections)
    async with aiohttp.ClientSession(connector=connector) as session:
        crowd = Crowd(session, **clock)
        await asyncio.gather(*(flow(crowd, buyer) for buyer in buyers))
    return crowd.tally
