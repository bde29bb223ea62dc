"""Each round trip of a write: its SQL statements and its cache calls, in order
(`python -m bench.profile --trips`; listed in docs/performance.md, "The writes, round trip by
round trip").

Sends one request of each write through the WSGI application, as `make bench` sends them, against
the benchmark's rows: the statements through Django's CaptureQueriesContext, the cache calls
through Redis's MONITOR (the commands of the benchmark's database, up to a marker this module
sends after the request). Django's `SELECT 1` health check of a kept connection and the commands
of the task queue's own process are not the request's and are not listed.
"""

import random
import re

from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_redis import get_redis_connection

from bench import data, database, driver
from bench.profile import _call, _environ

MARKER = "bench-trips-end"


class CacheCalls:
    """The Redis commands sent to the cache's database, read through MONITOR."""

    def __init__(self):
        self.client = get_redis_connection("default")
        self.db = self.client.connection_pool.connection_kwargs.get("db", 0)
        self.monitor = self.client.monitor().__enter__()

    def since_last(self) -> list[str]:
        """The commands since the last call (this one's marker excluded)."""
        self.client.echo(MARKER)
        commands: list[str] = []
        while True:
            seen = self.monitor.next_command()
            if seen["command"] == f"ECHO {MARKER}":
                return commands
            # A script's own commands are not round trips: its EVAL is.
            if seen["db"] == self.db and seen.get("client_type") != "lua":
                commands.append(seen["command"])

    def close(self) -> None:
        self.monitor.__exit__()


def _short_sql(sql: str) -> str:
    sql = re.sub(r'"[a-z_]+"\."([a-z_0-9]+)"', r"\1", sql)  # table.column → column
    return sql if len(sql) <= 160 else sql[:157] + "..."


def _short_command(command: str) -> str:
    return command if len(command) <= 120 else command[:117] + "..."


def requests() -> dict[str, list[str]]:
    """Two request lines of each write, from the ones `make bench` sends: the first warms up
    (an account's permissions are loaded and kept with its credential at its first write)."""
    today, rng = timezone.localdate(), random.Random(3)
    buys = driver._buy_lines(today, rng)
    held = driver._placed_orders(today, rng, hold=True, count=len(data.VISITORS) + 1)
    sold = driver._placed_orders(today, rng, hold=False, count=len(data.VISITORS) + 1)
    general = [line for line in buys if '"general"' in line]
    event = [line for line in buys if '"event"' in line]
    return {
        "a purchase, general entry (POST /v1.1/tickets)": _same_account(general),
        "a purchase, an event (POST /v1.1/tickets)": _same_account(event),
        "an order of 4 (POST /v1.1/orders)": _same_account(driver._order_lines(today, rng)),
        "a confirmation (POST /v1.1/orders/{id}/confirm)": _same_account(
            [driver.request_line("POST", f"/v1.1/orders/{pk}/confirm", user) for pk, user in held]
        ),
        "a cancellation (POST /v1.1/orders/{id}/cancel)": _same_account(
            [driver.request_line("POST", f"/v1.1/orders/{pk}/cancel", user) for pk, user in sold]
        ),
        "a check-in (POST /v1.1/tickets/check-in)": _same_account(driver._check_in_lines()),
    }


def _same_account(lines: list[str]) -> list[str]:
    """The first line, and the next one sent by the same account (its Authorization)."""
    account = lines[0].split("\t")[2]
    return [lines[0], next(line for line in lines[1:] if line.split("\t")[2] == account)]


def list_trips() -> None:
    from django.core.wsgi import get_wsgi_application

    database.reset_used_up()
    driver.forget_credentials()
    application = get_wsgi_application()
    writes = requests()  # first: placing its orders makes the kept accounts stale
    for username in data.VISITORS + data.STAFF:  # signed in and remembered, as in the benchmark
        _call(application, _environ(driver.request_line("GET", "/v1.1/museum-hours", username)))
    calls = CacheCalls()
    try:
        for label, (warm_up, line) in writes.items():
            _call(application, _environ(warm_up))
            calls.since_last()
            with CaptureQueriesContext(connection) as queries:
                status = _call(application, _environ(line))
            commands = calls.since_last()
            statements = [q["sql"] for q in queries.captured_queries]
            print(
                f"### {label}: {status}, {len(statements)} statements, {len(commands)} cache calls"
            )
            for n, sql in enumerate(statements, start=1):
                print(f"{n:>3}. {_short_sql(sql)}")
            for command in commands:
                print(f"     cache: {_short_command(command)}")
            print()
    finally:
        calls.close()
        cache.close()
