"""`make drop`: a blockbuster drop (issue 52), the same crowd with the waiting room and without.

10,000 buyers want the 1,000 places of one day. The first scenario sells them through a drop's
waiting room, the second lets everyone buy at the opening.

1. A PostgreSQL database of its own, `museum_bench_drop` (created if missing, migrated; a run
   empties its orders and days first), and Redis database 15 (flushed before and after each
   scenario). One museum day DAYS_AHEAD days ahead, untimed general entry, --places places; the
   visitor categories are the migrations' own (adult and the rest). --buyers accounts, written
   with bulk_create and one password hashed once.
2. For each scenario, gunicorn with the production settings of bench/run.py (SERVICE_ENV), behind
   one proxy (MUSEUM_NUM_PROXIES=1: each buyer comes from an address of its own, as a crowd does),
   and BENCH_CHEAP_PASSWORD_HASHER (bench/hashers.py): every buyer signs in once before the clock
   starts, unmeasured, since 10,000 real first sign-ins would take ~50 CPU minutes. What one real
   sign-in costs the server is measured apart, on accounts with a real hash.
3. With the waiting room: a Drop made with the ORM, its pre-queue open at once and the sale
   PREQUEUE_SECONDS later, on the real clock; 70 % of the buyers join over the pre-queue's minute,
   the rest over the first LATE_SECONDS after the opening; each polls as `pollAfterSeconds` says,
   buys 1-4 tickets (seeded) with its Queue-Token when admitted, and gives up when told sold out.
4. Without: no Drop; everyone who arrived before the opening POSTs /v1.1/orders at it, the others
   on arrival, retrying twice on errors and timeouts (with an Idempotency-Key), giving up on
   sold_out.
5. Figures from what the buyers were answered (bench/crowd.py), the database (places sold, read
   afterwards) and /proc (the server's CPU), printed and, with --write-docs, written into
   docs/performance.md between its "drop results" markers.

    .venv/bin/python -m bench.drop [--buyers 10000] [--places 1000] [--outflow 600]
        [--servers "gunicorn sync"] [--write-docs]

Never point BENCH_DROP_DATABASE_URL at a database you care about: the run empties its tables.
"""

import argparse
import asyncio
import datetime as dt
import os
import platform
import random
import sys
import time
import urllib.request
import uuid
from collections import Counter
from functools import partial
from importlib import metadata
from pathlib import Path

import redis

from bench import crowd, servers
from bench.run import SERVICE_ENV

ROOT = Path(__file__).resolve().parent.parent
WORK = Path("/tmp/museum-bench-drop")
DOCS = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- drop results: begin (written by `make drop`) -->", "<!-- drop results: end -->"

DATABASE_URL = os.environ.get(
    "BENCH_DROP_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/museum_bench_drop"
)
# Database 15 is this script's alone (12 bench.flood's, 13 tests/test_two_nodes.py's, 14 make
# bench's).
REDIS_URL = "redis://127.0.0.1:6379/15"
ENV = {
    **SERVICE_ENV,
    "DATABASE_URL": DATABASE_URL,
    "REDIS_URL": REDIS_URL,
    "MUSEUM_NUM_PROXIES": "1",
    "BENCH_CHEAP_PASSWORD_HASHER": "true",
}

PASSWORD = "drop-password-not-a-secret"
BUYER = "drop-buyer-{:05d}"
REAL = [f"drop-real-{n}" for n in range(3)]  # real PBKDF2 hashes: what a real sign-in costs
DAYS_AHEAD = 3
PREQUEUE_SECONDS = 60
LATE_SECONDS = 10
SHARE_BEFORE = 0.7
MAX_TICKETS = 4
ADMISSION_MINUTES = 5
SEED = 52
# The crowd's connections at once: the limit a proxy in front keeps to the workers, a request
# waiting for a free one until its buyer stops waiting (HAProxy's maxconn and abortonclose). With
# 1,000 the server's backlog held requests whose buyers had left, and the 2 workers spent the
# drop's minutes on them: no join or purchase was answered in time.
CONNECTIONS = 32
RUSH_LEAD_SECONDS = 3  # from the crowd's start to the opening without a waiting room


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--buyers", type=int, default=10_000)
    parser.add_argument("--places", type=int, default=1_000)
    parser.add_argument("--outflow", type=int, default=600, help="admissions a minute")
    parser.add_argument("--connections", type=int, default=CONNECTIONS, help="the crowd's pool")
    parser.add_argument("--servers", default="gunicorn sync", help="comma-separated")
    parser.add_argument("--scenarios", default="queue,rush", help="comma-separated")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    return parser.parse_args(argv)


def setup_django() -> None:
    os.environ.update(ENV)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def prepare(*, buyers: int) -> None:
    """Migrate, and make the buyers' accounts unless they are there."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command

    from bench.hashers import CheapPBKDF2PasswordHasher

    call_command("migrate", verbosity=0)
    User = get_user_model()
    password = make_password(PASSWORD)  # the cheap hasher: bench.settings puts it first
    mine = User.objects.filter(username__startswith=BUYER.split("{")[0])
    mine.exclude(password__startswith=CheapPBKDF2PasswordHasher.algorithm + "$").update(
        password=password
    )
    have = set(mine.values_list("username", flat=True))
    missing = [name for n in range(buyers) if (name := BUYER.format(n)) not in have]
    # Each with a mailbox of its own: a drop's line takes one place per mailbox.
    User.objects.bulk_create(
        [User(username=name, password=password, email=email_of(name)) for name in missing],
        batch_size=2000,
    )
    # Hashed by Django's PBKDF2: their first sign-in shows what a real one costs (and rehashes
    # them with the cheap hasher, which bench.settings prefers).
    real = make_password(PASSWORD, hasher="pbkdf2_sha256")
    for username in REAL:
        User.objects.update_or_create(username=username, defaults={"password": real})


def email_of(username: str) -> str:
    return f"{username}@bench.invalid"


def reset(*, places: int) -> dt.date:
    """Empty what a scenario sells (orders, drops, days, their idempotency keys and tasks) and
    make the day again."""
    from django.db import connection
    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    from bench.database import _name
    from hours.models import MuseumDay
    from museum.models import IdempotencyKey
    from orders.models import Order

    _name(connection.settings_dict["NAME"])  # refuses a database without "bench" in its name
    tables = [m._meta.db_table for m in (Order, MuseumDay, IdempotencyKey, DBTaskResult)]
    with connection.cursor() as cursor:
        # CASCADE: the tickets, payments and drops that point at them go too.
        cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")
    day = timezone.localdate() + dt.timedelta(DAYS_AHEAD)
    MuseumDay.objects.create(date=day, opens_at=dt.time(10), closes_at=dt.time(18), capacity=places)
    return day


def make_drop(*, day: dt.date, outflow: int) -> tuple[int, dt.datetime]:
    """The drop: its pre-queue open now, its sale PREQUEUE_SECONDS from now."""
    from django.utils import timezone

    from drops.models import Drop
    from hours.models import MuseumDay

    now = timezone.now()
    opens_at = now + dt.timedelta(seconds=PREQUEUE_SECONDS)
    drop = Drop.objects.create(
        name="Bench blockbuster",
        prequeue_opens_at=now,
        opens_at=opens_at,
        closes_at=opens_at + dt.timedelta(hours=1),
        outflow_per_minute=outflow,
        max_tickets=MAX_TICKETS,
        admission_minutes=ADMISSION_MINUTES,
        seed=SEED,
        octo_allocation=0,
    )
    drop.days.set([MuseumDay.objects.get(date=day)])
    return drop.pk, opens_at


def sold(day: dt.date, opening_at: dt.datetime) -> dict:
    """What the database says was sold, read after the scenario."""
    from django.db.models import Max

    from hours.models import MuseumDay
    from orders.models import Order, Ticket

    museum_day = MuseumDay.objects.get(date=day)
    tickets = Ticket.objects.filter(date=day, cancelled_at__isnull=True)
    last = Order.objects.filter(date=day).aggregate(last=Max("created_at"))["last"]
    return {
        "holders": set(tickets.values_list("buyer__username", flat=True)),
        "capacity": museum_day.capacity,
        "sold": museum_day.sold,
        "tickets": tickets.count(),
        "orders": Order.objects.filter(date=day).count(),
        "last_sale": (last - opening_at).total_seconds() if last else None,
    }


def flush_redis() -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.flushdb()
    finally:
        client.close()


def the_crowd(args) -> list[crowd.Buyer]:
    """The same buyers for every scenario: arrivals and wishes from one seed."""
    rng = random.Random(SEED)
    offsets = crowd.arrivals(
        args.buyers, rng=rng, before=PREQUEUE_SECONDS, after=LATE_SECONDS, share_before=SHARE_BEFORE
    )
    return [
        crowd.Buyer(
            n=n,
            username=(name := BUYER.format(n)),
            authorization=crowd.basic(name, PASSWORD),
            arrives=offsets[n],
            wants=rng.randint(1, MAX_TICKETS),
        )
        for n in range(args.buyers)
    ]


def sign_in_cost(base: str, pid: int, usernames: list[str]) -> dict:
    """The server's CPU (median) and the wall time (least) of each account's first request, one
    after the other."""
    cpu, wall = [], []
    for number, username in enumerate(usernames):
        request = urllib.request.Request(
            f"{base}/v1.1/museum-hours",
            headers={
                "Authorization": crowd.basic(username, PASSWORD),
                "X-Forwarded-For": f"192.0.2.{number + 1}",
            },
        )
        before, started = servers.cpu_seconds(pid), time.monotonic()
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200, (username, response.status)
        wall.append(time.monotonic() - started)
        cpu.append(servers.cpu_seconds(pid) - before)
    return {"cpu_ms": 1000 * crowd.percentile(cpu, 0.5), "wall_ms": 1000 * min(wall)}


def first_requests(base: str, buyers: list[crowd.Buyer], connections: int) -> None:
    """A GET of the hours by each buyer, all at once; each must answer 200."""

    async def ask(line: crowd.Crowd, buyer: crowd.Buyer) -> None:
        # Unmeasured: on a busy machine a request may wait long for its turn, so ask again.
        for _ in range(5):
            answer = await line.call("sign-in", "GET", "/v1.1/museum-hours", buyer, timeout=300)
            if answer.status == 200:
                return
        raise RuntimeError(f"{buyer.username}'s first request answered {answer}")

    clock = {"opening": time.monotonic(), "opening_at": dt.datetime.now(dt.UTC)}
    asyncio.run(
        crowd.run(
            ask, buyers, connections=connections, base=base, day=dt.date.today(), run="", **clock
        )
    )


def sign_everyone_in(base: str, pid: int, buyers: list[crowd.Buyer], connections: int) -> dict:
    """What a real sign-in costs (on the accounts with Django's hasher), then every buyer's
    sign-in with the cheap one, remembered in Redis for the rest of the run."""
    real = sign_in_cost(base, pid, REAL)
    cpu, started = servers.cpu_seconds(pid), time.monotonic()
    first_requests(base, buyers, connections)
    seconds = time.monotonic() - started
    cheap_ms = 1000 * (servers.cpu_seconds(pid) - cpu) / len(buyers)
    print(f"  {len(buyers):,} buyers signed in in {seconds:.0f} s", flush=True)
    return {"real": real, "cheap_cpu_ms": cheap_ms, "seconds": seconds}


# Requests that warm a fresh server's workers up when the buyers signed in on an earlier one.
WARM_UP = 200


def scenario(name: str, kind: str, args, *, signed_in: dict | None) -> dict:
    """One scenario on a fresh server: reset, sign in (or warm up), run the crowd, read the
    figures. The buyers sign in on the first scenario's server; Redis remembers them after."""
    buyers = the_crowd(args)
    day = reset(places=args.places)
    port = servers.PORT + 20
    base = f"http://{servers.HOST}:{port}"
    log = WORK / f"{kind}-{name.replace(' ', '-')}.log"
    with servers.running(name, port=port, env={**os.environ, **ENV}, log=log) as process:
        if signed_in is None:
            signed_in = sign_everyone_in(base, process.pid, buyers, args.connections)
        else:
            first_requests(base, buyers[:WARM_UP], args.connections)
        cpu_before, driver_before = servers.cpu_seconds(process.pid), time.process_time()
        tally, opening_at, took = run_crowd(kind, args, buyers, day=day, base=base)
        cpu = servers.cpu_seconds(process.pid) - cpu_before
        driver_cpu = time.process_time() - driver_before
    return {
        "server": name,
        "kind": kind,
        "buyers": buyers,
        "tally": tally,
        "cpu_seconds": cpu,
        "driver_cpu_seconds": driver_cpu,
        "took": took,
        "db": sold(day, opening_at),
        "sign_in": signed_in,
    }


def run_crowd(kind: str, args, buyers: list[crowd.Buyer], *, day: dt.date, base: str):
    """The crowd, on the real clock: (the tally, the opening, the seconds it took)."""
    from django.utils import timezone

    flow: crowd.Flow
    if kind == "queue":
        drop_id, opening_at = make_drop(day=day, outflow=args.outflow)
        flow = partial(
            crowd.wait_in_line,
            path=f"/v1.1/drops/{drop_id}/queue",
            admission_minutes=ADMISSION_MINUTES,
        )
    else:
        opening_at = timezone.now() + dt.timedelta(seconds=RUSH_LEAD_SECONDS)
        flow = crowd.rush
    opening = time.monotonic() + (opening_at - timezone.now()).total_seconds()
    # Long enough for every place to go to a buyer of one ticket at the outflow, and a minute
    # more for the last to hear; buyers still waiting then stop ("unfinished").
    deadline = 60 + 60 * args.places / args.outflow
    started = time.monotonic()
    tally = asyncio.run(
        crowd.run(
            flow,
            buyers,
            connections=args.connections,
            base=base,
            day=day,
            run=uuid.uuid4().hex[:12],
            opening=opening,
            opening_at=opening_at,
            deadline=deadline,
        )
    )
    return tally, opening_at, time.monotonic() - started


def figures(result: dict) -> dict:
    """The table's cells of one scenario."""
    buyers, tally, db = result["buyers"], result["tally"], result["db"]
    count = len(buyers)
    done = [b.done_at for b in buyers if b.done_at is not None]
    timeouts = tally.failures("timeout")
    fairness, fifo = crowd.arrival_fairness(
        [b.arrives for b in buyers], [b.username in db["holders"] for b in buyers]
    )
    found = {
        "places": f"{db['tickets']:,} (day: {db['sold']:,} of {db['capacity']:,})",
        # Sold, but the buyer never had the answer (it gave up waiting before it came).
        "unseen": db["tickets"] - sum(b.bought for b in buyers),
        "errors": tally.server_errors(),
        "timeouts": f"{timeouts:,} / {tally.failures() - timeouts:,}",
        "purchase": _p50_p99(tally, "purchase"),
        "requests": tally.requests() / count,
        "cpu_ms": 1000 * result["cpu_seconds"] / count,
        "arrival": f"{fairness:.2f} (first come first served: {fifo:.2f})",
        "last_sale": _seconds(db["last_sale"]),
        "all_told": _seconds(max(done) if done else None),
    }
    if result["kind"] == "queue":
        found |= _queue_figures(buyers, tally)
    return found


def _queue_figures(buyers: list[crowd.Buyer], tally: crowd.Tally) -> dict:
    admitted = [b for b in buyers if b.admitted_at is not None]
    times = sorted(b.admitted_at for b in admitted if b.admitted_at is not None)
    span = times[-1] - times[0] if times else 0
    rate = (len(times) - 1) / span * 60 if span else float("nan")
    ranked = [b for b in admitted if b.position is not None]
    fairness = crowd.spearman(
        [b.position or 0 for b in ranked], [b.admitted_at or 0 for b in ranked]
    )
    return {
        "rate": f"{rate:.0f} ({len(admitted):,} admitted)",
        "unfinished": sum(b.outcome == "unfinished" for b in buyers),
        "poll": _p50_p99(tally, "poll"),
        "fairness": f"{fairness:.3f}",
    }


def _p50_p99(tally: crowd.Tally, kind: str) -> str:
    seconds = tally.latencies.get(kind, [])
    p50, p99 = crowd.percentile(seconds, 0.5), crowd.percentile(seconds, 0.99)
    return f"{1000 * p50:.0f} / {1000 * p99:.0f}" if seconds else "–"


def _seconds(value: float | None) -> str:
    return f"{value:.0f}" if value is not None else "–"


QUEUE_COLUMNS = [
    ("server", "server"),
    ("places sold", "places"),
    ("of which unseen", "unseen"),
    ("server errors", "errors"),
    ("timeouts / connection errors", "timeouts"),
    ("admitted a minute", "rate"),
    ("status p50 / p99 ms", "poll"),
    ("purchase p50 / p99 ms", "purchase"),
    ("requests a buyer", "requests"),
    ("server CPU a buyer, ms", "cpu_ms"),
    ("ρ(position, admission)", "fairness"),
    ("ρ(arrival, missing out)", "arrival"),
    ("last sale, s", "last_sale"),
    ("last buyer told, s", "all_told"),
    ("still waiting at the end", "unfinished"),
]
RUSH_COLUMNS = [
    ("server", "server"),
    ("places sold", "places"),
    ("of which unseen", "unseen"),
    ("server errors", "errors"),
    ("timeouts / connection errors", "timeouts"),
    ("purchase p50 / p99 ms", "purchase"),
    ("requests a buyer", "requests"),
    ("server CPU a buyer, ms", "cpu_ms"),
    ("ρ(arrival, missing out)", "arrival"),
    ("last sale, s", "last_sale"),
    ("last buyer told, s", "all_told"),
]


def table(rows: list[dict], columns: list[tuple[str, str]]) -> list[str]:
    def cell(value) -> str:
        if isinstance(value, float):
            return f"{value:,.1f}"
        return f"{value:,}" if isinstance(value, int) else str(value)

    lines = ["| " + " | ".join(title for title, _ in columns) + " |"]
    lines.append("|---" + "|---:" * (len(columns) - 1) + "|")
    lines += ["| " + " | ".join(cell(row[key]) for _, key in columns) + " |" for row in rows]
    return lines


def details(result: dict) -> str:
    """What became of the buyers, and every answer they got, by kind."""
    outcomes = Counter(b.outcome for b in result["buyers"])
    told = ", ".join(f"{outcome}: {n:,}" for outcome, n in outcomes.most_common())
    tally = result["tally"]
    latencies = "; ".join(
        f"{kind} {_p50_p99(tally, kind)}"
        for kind in ("join", "poll", "purchase")
        if kind in tally.latencies
    )
    return (
        f"- {result['server']}, {result['kind']}: buyers {told}. Answers (kind, status, code or "
        f"state): {tally.summary()}. p50 / p99 ms: {latencies}. The crowd's own CPU (one "
        f"process): {result['driver_cpu_seconds']:.0f} s."
    )


def sign_in_line(signed_in: dict, buyers: int) -> str:
    real = signed_in["real"]
    return (
        f"A first sign-in with Django's PBKDF2 cost the server {real['cpu_ms']:.0f} ms of CPU "
        f"({real['wall_ms']:.0f} ms to answer): {buyers:,} buyers' first sign-ins would take "
        f"{real['cpu_ms'] * buyers / 60_000:.0f} CPU minutes. With the benchmark's hasher "
        f"the {buyers:,} took {signed_in['seconds']:.0f} s, {signed_in['cheap_cpu_ms']:.1f} ms "
        "of server CPU each, before the clock started."
    )


def markdown(results: list[dict], *, args, machine: str) -> str:
    queue = [{"server": r["server"], **figures(r)} for r in results if r["kind"] == "queue"]
    rush = [{"server": r["server"], **figures(r)} for r in results if r["kind"] == "rush"]
    lines = [
        f"Measured {machine}. {args.buyers:,} buyers, {args.places:,} places, an outflow of "
        f"{args.outflow:,} admissions a minute, a pool of {args.connections} connections; "
        "seconds counted from the opening.",
        "",
    ]
    if queue:
        lines += ["With the waiting room:", "", *table(queue, QUEUE_COLUMNS), ""]
    if rush:
        lines += ["Without a waiting room:", "", *table(rush, RUSH_COLUMNS), ""]
    lines += [sign_in_line(results[0]["sign_in"], args.buyers), ""] if results else []
    lines += [details(result) for result in results]
    return "\n".join(lines)


def describe_machine(load_before: str) -> str:
    load = " / ".join(f"{n:.2f}" for n in os.getloadavg())
    return (
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, nproc "
        f"{os.cpu_count()}, Python {platform.python_version()}, gunicorn "
        f"{metadata.version('gunicorn')}, aiohttp {metadata.version('aiohttp')}; load average "
        f"{load_before} before, {load} after"
    )


def main(argv=None) -> int:
    args = parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    load_before = " / ".join(f"{n:.2f}" for n in os.getloadavg())
    from bench import database

    database.create_if_missing(DATABASE_URL)
    setup_django()
    prepare(buyers=args.buyers)
    names = [name.strip() for name in args.servers.split(",") if name.strip()]
    kinds = [kind.strip() for kind in args.scenarios.split(",") if kind.strip()]
    results: list[dict] = []
    flush_redis()
    try:
        # Without a waiting room first: it leaves no line in Redis for the next scenario.
        for kind in sorted(kinds, key=lambda kind: kind != "rush"):
            for name in names:
                print(f"{kind} on {name}:", flush=True)
                signed_in = results[0]["sign_in"] if results else None
                results.append(scenario(name, kind, args, signed_in=signed_in))
                print(details(results[-1]), flush=True)
    finally:
        flush_redis()
    text = markdown(results, args=args, machine=describe_machine(load_before))
    print(f"\n{text}")
    if args.write_docs:
        from bench import report

        report.write_docs(DOCS, text, begin=BEGIN, end=END)
        print(f"\nwrote {DOCS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
