"""CPU per request, in one process and without HTTP: where `make bench`'s time goes.

Calls the WSGI application directly with each endpoint's requests (the ones `make bench` sends)
and reports the process's CPU time per request and its share of the floor's. A busy machine
changes how fast a request runs but hardly its CPU time, so this is the number to compare while
other work shares the cores. PostgreSQL's and Redis's own CPU is not in it.

    .venv/bin/python -m bench.profile [--rounds 5] [--endpoints hours,list] [--cprofile]
    .venv/bin/python -m bench.profile --statements
    .venv/bin/python -m bench.profile --middleware
    .venv/bin/python -m bench.profile --trips

`--statements` prints instead what one statement costs: a ticket read by its key through the ORM
(as a model, and as values) and through a cursor, and an UPDATE of one ticket by key (with its
BEGIN and ROLLBACK). A write's CPU is about the signed-in request's plus its
statements' (docs/performance.md, "Against the targets").

`--middleware` prices what every request pays before its view: the floor and the signed-in
request through the middleware built up one at a time (each step's CPU less the step before's),
the bare project's floor (bench/bare/, in a process of its own), and each per-request hook
timed alone (docs/performance.md, "What every request pays").

Run `make bench` (or `python -m bench.run --seconds 1`) once first: it loads the rows.
"""

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time

from bench import FLOOR_PATH
from bench.run import SERVICE_ENV, WORK, setup_django


def _environ(line: str) -> dict:
    # A sixth field (wrk.lua waits for an answer before sending the line) does not matter here:
    # the lines are sent one after another.
    method, path, auth, etag, body = line.split("\t")[:5]
    path, _, query = path.partition("?")
    payload = b"" if body == "-" else body.encode()
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8765",
        "HTTP_HOST": "127.0.0.1",
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "CONTENT_LENGTH": str(len(payload)),
    }
    if auth != "-":
        environ["HTTP_AUTHORIZATION"] = auth
    if etag != "-":
        environ["HTTP_IF_NONE_MATCH"] = etag
    if payload:
        environ["CONTENT_TYPE"] = "application/json"
    environ["_body"] = payload
    return environ


def _call(application, environ: dict) -> str:
    environ = dict(environ)
    environ["wsgi.input"] = io.BytesIO(environ.pop("_body"))
    answer = []
    body = application(environ, lambda status, headers, exc_info=None: answer.append(status))
    b"".join(body)
    body.close()
    return answer[0]


def measure(application, lines: list[str], count: int) -> tuple[float, float, dict]:
    """(CPU µs, wall µs) per request, and the statuses, over `count` requests."""
    environs = [_environ(line) for line in lines]
    statuses: dict[str, int] = {}
    cpu, wall = time.process_time(), time.perf_counter()
    for n in range(count):
        status = _call(application, environs[n % len(environs)])
        statuses[status] = statuses.get(status, 0) + 1
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu / count * 1e6, wall / count * 1e6, statuses


def _per_call(function, count: int = 2000) -> float:
    """CPU µs per call of `function(n)`, after a warm-up (psycopg prepares a statement once a
    connection has run it five times)."""
    for n in range(100):
        function(n)
    started = time.process_time()
    for n in range(count):
        function(n)
    return (time.process_time() - started) / count * 1e6


def statements() -> None:
    from django.db import connection, transaction
    from django.utils import timezone

    from orders.models import Ticket

    keys = list(Ticket.objects.order_by().values_list("pk", flat=True)[:2000])
    table = Ticket._meta.db_table

    def key(n: int):
        return keys[n % len(keys)]

    def through_cursor(n: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f'SELECT "id", "date" FROM "{table}" WHERE "id" = %s', [key(n)])
            cursor.fetchone()

    now = timezone.now()

    def update(n: int) -> None:
        # Undone: the benchmark's tickets stay as they were.
        unclaimed = Ticket.objects.filter(pk=key(n), checked_in_at=None, cancelled_at=None)
        with transaction.atomic():
            unclaimed.update(checked_in_at=now)
            transaction.set_rollback(True)

    measured = {
        "a ticket by its key, as a model (ORM)": lambda n: Ticket.objects.get(pk=key(n)),
        "a ticket by its key, two columns as values (ORM)": lambda n: (
            Ticket.objects.filter(pk=key(n)).values_list("id", "date").get()
        ),
        "a ticket by its key, two columns through a cursor": through_cursor,
        "an UPDATE of a ticket by its key (ORM)": update,
    }
    for label, function in measured.items():
        print(f"{label:<52} CPU per statement: {_per_call(function):5.0f} µs", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100, help="per endpoint and round")
    parser.add_argument("--rounds", type=int, default=5, help="the endpoints take turns")
    parser.add_argument("--endpoints", default="", help="comma-separated keys; default: all")
    parser.add_argument("--cprofile", action="store_true", help="write each endpoint's profile")
    parser.add_argument("--statements", action="store_true", help="what one statement costs")
    parser.add_argument("--middleware", action="store_true", help="what each middleware costs")
    parser.add_argument("--bare", action="store_true", help="the bare floor's CPU alone")
    parser.add_argument("--trips", action="store_true", help="each write's statements and calls")
    args = parser.parse_args(argv)
    if args.bare:
        print(f"{bare_floor(args.requests * 10, args.rounds):.1f}")
        return 0
    # Metrics as gunicorn's workers keep them: in files (museum/metrics.py), not in memory.
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="bench-metrics-"))
    setup_django()
    if args.statements:
        statements()
    elif args.middleware:
        from bench import pricing

        pricing.price_middleware(args)
    elif args.trips:
        from bench import trips

        trips.list_trips()
    else:
        profile_requests(args)
    return 0


def bare_floor(count: int, rounds: int) -> float:
    """The bare project's floor (bench/bare/): CPU µs per request, the least of `rounds`."""
    from bench.bare.wsgi import application

    line = f"GET\t{FLOOR_PATH}\t-\t-\t-"
    measure(application, [line], count)  # the first requests warm up
    return min(measure(application, [line], count)[0] for _ in range(rounds))


def bare_floor_in_own_process(count: int, rounds: int) -> float:
    """bare_floor() in a process of its own: its settings are not the service's."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.profile", "--bare", f"--requests={count // 10}"]
        + [f"--rounds={rounds}"],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
    )
    return float(done.stdout.split()[-1])


def profile_requests(args) -> None:
    from django.core.wsgi import get_wsgi_application

    from bench import data, database, driver

    database.reset_used_up()
    driver.forget_credentials()
    application = get_wsgi_application()
    # Each account pays for PBKDF2 once, here, as `make bench` has them do before measuring.
    for username in data.VISITORS + data.STAFF:
        _call(application, _environ(driver.request_line("GET", "/v1.1/museum-hours", username)))
    wanted = {key for key in args.endpoints.split(",") if key}
    # The bare floor is another project: bare_floor() measures it, in a process of its own.
    endpoints = [
        e
        for e in driver.endpoints(wanted)
        if e.key != "floor-again"
        and not e.bare
        and (not wanted or e.key in wanted or e.key == "floor")
    ]
    # Requests meant to be sent once (check-in, first image) are used up in order.
    unused = {e.key: list(e.lines) for e in endpoints}
    cpu: dict[str, list[float]] = {e.key: [] for e in endpoints}
    profilers = {e.key: cProfile.Profile(time.process_time) for e in endpoints}
    for _ in range(args.rounds + 1):  # the first round warms up: imports, caches
        for endpoint in endpoints:
            lines = unused[endpoint.key] if endpoint.again else endpoint.lines
            # CPU time, not wall time: waiting for PostgreSQL and Redis is not our CPU.
            profiler = profilers[endpoint.key] if args.cprofile and cpu[endpoint.key] else None
            if profiler:
                profiler.enable()
            per_request, _, statuses = measure(application, lines, args.requests)
            if profiler:
                profiler.disable()
            if endpoint.again:
                del unused[endpoint.key][: args.requests]
            cpu[endpoint.key].append(per_request)
            bad = {status: n for status, n in statuses.items() if int(status[:3]) >= 400}
            if bad:
                print(f"{endpoint.label}: {bad}", file=sys.stderr)
    floor = min(cpu["floor"][1:])
    for endpoint in endpoints:
        rounds = sorted(cpu[endpoint.key][1:])
        least, median = rounds[0], rounds[len(rounds) // 2]
        print(
            f"{endpoint.label:<44} CPU per request: least {least:7.0f} µs, median {median:7.0f} µs"
            f"  floor's least / least {floor / least:5.2f}",
            flush=True,
        )
        if args.cprofile:
            out = io.StringIO()
            stats = pstats.Stats(profilers[endpoint.key], stream=out)
            stats.sort_stats("cumulative").print_stats(40)
            (WORK / f"profile-{endpoint.key}.txt").write_text(out.getvalue())
            stats.dump_stats(WORK / f"profile-{endpoint.key}.prof")  # for pstats or snakeviz
    bare = bare_floor_in_own_process(args.requests * 10, args.rounds)
    print(f"{'the bare project floor (bench/bare/)':<44} CPU per request: least {bare:7.0f} µs")
    print(f"(database {SERVICE_ENV['DATABASE_URL']}; cProfile output in {WORK}/)")


if __name__ == "__main__":
    sys.exit(main())
