"""`make flood`: a legitimate client's latency while another client floods wrong passwords.

Each wrong password costs Django's PBKDF2 hasher ~300 ms of CPU, so a client sending them as fast
as it can would keep every worker hashing. MuseumBasicAuthentication refuses with 429, before the
hasher, once a username or an address used up its failed sign-ins, runs one password check at a
time per address (museum/throttling.py), and accepts a remembered credential without hashing.
This script proves it with figures:

1. A fresh SQLite database in a temporary directory, one account with a real PBKDF2 password, and
   Redis database 12 (flushed before and after) shared by gunicorn's 2 sync workers, started with
   the production settings on a free loopback port, behind one proxy (MUSEUM_NUM_PROXIES=1): each
   client names its own address in X-Forwarded-For, as a proxy would, since every lockout is per
   address and the attacker and the legitimate client are not the same machine.
2. The legitimate client signs in once, then measures GET /v1.1/museum-hours sequentially for
   BASELINE_SECONDS (the baseline).
3. For FLOOD_SECONDS, ATTACKERS threads from one other address send wrong passwords, half for the
   account's username and half for random ones, while the legitimate client keeps measuring the
   same GET.
4. The same again with the failure budgets lifted (a million failures allowed): what one check at
   a time per address does on its own.

    .venv/bin/python -m bench.flood [--write-docs]
"""

import argparse
import base64
import datetime
import http.client
import os
import platform
import re
import secrets
import socket
import subprocess
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import redis

from bench import servers
from bench.servers import BIN, HOST

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- flood results: begin -->", "<!-- flood results: end -->"
HEADING = "## Brute force under load: `python -m bench.flood`"

# Database 12 is this script's alone (13 is tests/test_two_nodes.py's, 14 the benchmark's).
REDIS_URL = "redis://127.0.0.1:6379/12"
USERNAME = "legit"
PATH = "/v1.1/museum-hours"
BASELINE_SECONDS = 3
# Long enough to see both phases: the first seconds, while the address's 30 failed sign-ins are
# hashed one at a time, and the lockout after them.
FLOOD_SECONDS = 15
ATTACKERS = 8
# As the proxy in front would append them (documentation ranges, RFC 5737).
LEGIT_ADDRESS = "192.0.2.10"
ATTACKER_ADDRESS = "198.51.100.66"
REQUEST_TIMEOUT = 20  # s; a request still waiting then counts as an error
LIMITER_OFF = {
    "MUSEUM_AUTH_FAILURES_PER_USERNAME_AND_ADDRESS": "1000000",
    "MUSEUM_AUTH_FAILURES_PER_USERNAME": "1000000",
    "MUSEUM_AUTH_FAILURES_PER_ADDRESS": "1000000",
}


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def get(port: int, authorization: str, address: str) -> int:
    """One GET on a connection of its own (sync workers close it anyway), from `address` as the
    proxy tells it; the status."""
    connection = http.client.HTTPConnection(HOST, port, timeout=REQUEST_TIMEOUT)
    headers = {"Authorization": authorization, "X-Forwarded-For": address}
    try:
        connection.request("GET", PATH, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@dataclass
class Latencies:
    seconds: list[float] = field(default_factory=list)
    finished: list[float] = field(default_factory=list)  # monotonic, of each answered request
    errors: Counter = field(default_factory=Counter)

    def percentile(self, share: float) -> float:
        """In milliseconds (nearest rank); nan without a single answer."""
        if not self.seconds:
            return float("nan")
        ordered = sorted(self.seconds)
        rank = max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))
        return ordered[rank] * 1000


def measure(port: int, authorization: str, until: float) -> Latencies:
    """The legitimate client: the same GET, one after the other, until the monotonic `until`."""
    result = Latencies()
    while time.monotonic() < until:
        started = time.perf_counter()
        try:
            status = get(port, authorization, LEGIT_ADDRESS)
        except OSError as error:
            result.errors[type(error).__name__] += 1
            continue
        if status == 200:
            result.seconds.append(time.perf_counter() - started)
            result.finished.append(time.monotonic())
        else:
            result.errors[str(status)] += 1
    return result


def attack(port: int, target_legit: bool, until: float, statuses: dict[str, float], lock) -> None:
    """Wrong passwords as fast as one thread can send them, until the monotonic `until`.

    statuses also gets, under "first 429", the monotonic time the first refusal arrived.
    """
    while time.monotonic() < until:
        username = USERNAME if target_legit else f"user-{secrets.token_hex(6)}"
        try:
            status = str(get(port, basic(username, secrets.token_urlsafe(12)), ATTACKER_ADDRESS))
        except OSError as error:
            status = type(error).__name__
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if status == "429":
                statuses.setdefault("first 429", time.monotonic())


def prepare_database(env: dict, password: str) -> None:
    manage = [str(BIN / "python"), "manage.py"]

    def run(*args: str, stdin: str | None = None) -> None:
        subprocess.run(
            [*manage, *args],
            input=stdin,
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )

    run("migrate", "--noinput")
    run("create_account", USERNAME, "--password-stdin", stdin=password)


def flush_redis() -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.flushdb()
    finally:
        client.close()


def scenario(name: str, env: dict, password: str, work: Path, flood_seconds: float) -> dict:
    flush_redis()
    port = free_port()
    log = work / f"gunicorn-{len(list(work.glob('gunicorn-*')))}.log"
    # The benchmark's own "gunicorn sync" (2 workers), started and stopped as make bench does.
    try:
        with servers.running("gunicorn sync", port=port, env=env, log=log):
            legit = basic(USERNAME, password)
            started = time.perf_counter()
            # Pays PBKDF2 once; later requests are remembered.
            status = get(port, legit, LEGIT_ADDRESS)
            if status != 200:
                raise RuntimeError(f"the legitimate sign-in answered {status}; see {log}")
            sign_in_ms = (time.perf_counter() - started) * 1000
            baseline = measure(port, legit, time.monotonic() + BASELINE_SECONDS)

            statuses: dict[str, float] = {}
            lock = threading.Lock()
            flood_started = time.monotonic()
            until = flood_started + flood_seconds
            attackers = [
                threading.Thread(target=attack, args=(port, i % 2 == 0, until, statuses, lock))
                for i in range(ATTACKERS)
            ]
            for thread in attackers:
                thread.start()
            flood = measure(port, legit, until)
            for thread in attackers:
                thread.join(timeout=REQUEST_TIMEOUT + 5)
    finally:
        flush_redis()
    first_429 = statuses.pop("first 429", None)
    return dict(
        name=name,
        sign_in_ms=sign_in_ms,
        baseline=baseline,
        flood=flood,
        attack=statuses,
        flood_started=flood_started,
        flood_seconds=flood_seconds,
        first_429=None if first_429 is None else first_429 - flood_started,
    )


def fmt(value: float) -> str:
    return "n/a" if value != value else f"{value:.1f}"


def print_scenario(result: dict) -> None:
    baseline, flood, attack_statuses = result["baseline"], result["flood"], result["attack"]
    print(f"\n### {result['name']}")
    print(f"legitimate sign-in (PBKDF2 once): {result['sign_in_ms']:.0f} ms")
    answers = ", ".join(f"{status}: {count}" for status, count in sorted(attack_statuses.items()))
    seconds = result["flood_seconds"]
    print(f"attacker answers in {seconds:g} s ({ATTACKERS} threads): {answers or 'none'}")
    print(f"wrong passwords that reached the hasher (401s): {attack_statuses.get('401', 0)}")
    first = result["first_429"]
    print("first 429 after: " + ("never" if first is None else f"{first:.1f} s"))
    print(f"{'legit client':<22}{'p50 ms':>10}{'p99 ms':>10}{'requests':>10}  errors")
    for label, run in (("baseline", baseline), ("under flood", flood)):
        errors = dict(run.errors) or 0
        p50, p99 = fmt(run.percentile(0.5)), fmt(run.percentile(0.99))
        print(f"{label:<22}{p50:>10}{p99:>10}{len(run.seconds):>10}  {errors}")
    ratio = flood.percentile(0.99) / baseline.percentile(0.99)
    print(f"p99 under flood / p99 baseline: {fmt(ratio)}x")
    print("legit answers under flood, by second of the flood (answered: count, max ms):")
    print("  " + slices(flood, result["flood_started"], seconds))


def slices(run: Latencies, started: float, seconds: float) -> str:
    """Per second of the flood: how many answers finished in it and the slowest of them."""
    buckets: dict[int, list[float]] = {second: [] for second in range(int(seconds + 0.999))}
    for finished, latency in zip(run.finished, run.seconds, strict=True):
        buckets.setdefault(int(finished - started), []).append(latency)
    return "; ".join(
        f"{second}s: {len(values)}, {max(values) * 1000:.0f}" if values else f"{second}s: 0"
        for second, values in sorted(buckets.items())
    )


def table(results: list[dict]) -> str:
    lines = [
        "| scenario | attacker 401s | attacker 429s | legit p50 ms | legit p99 ms "
        "| legit requests | legit errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        for label, run in (("baseline", result["baseline"]), ("flood", result["flood"])):
            attack_statuses = result["attack"] if label == "flood" else Counter()
            a401 = attack_statuses.get("401", 0) if label == "flood" else "–"
            a429 = attack_statuses.get("429", 0) if label == "flood" else "–"
            lines.append(
                f"| {result['name']}, {label} | {a401} | {a429} "
                f"| {fmt(run.percentile(0.5))} | {fmt(run.percentile(0.99))} "
                f"| {len(run.seconds)} | {sum(run.errors.values())} |"
            )
    return "\n".join(lines)


def timelines(results: list[dict]) -> str:
    """Per scenario: when the first 429 came and the legitimate answers per second of flood."""
    lines = ["Legitimate answers under flood, by second of the flood (count, slowest ms):", ""]
    for result in results:
        first = result["first_429"]
        when = "no 429" if first is None else f"first 429 after {first:.1f} s"
        timeline = slices(result["flood"], result["flood_started"], result["flood_seconds"])
        lines.append(f"- {result['name']} ({when}): {timeline}")
    return "\n".join(lines)


def write_docs(markdown: str, machine: str, flood_seconds: float) -> None:
    today = datetime.date.today().isoformat()
    section = "\n".join(
        [
            BEGIN,
            HEADING,
            "",
            f"Measured {today} on {machine}. One client floods wrong passwords for "
            f"{flood_seconds:g} s ({ATTACKERS} threads from one address, half for the account's "
            "username, half for random ones) while the account's own client, from another "
            f"address, sends `GET {PATH}` one after the other; gunicorn, 2 sync workers behind "
            "one proxy (addresses in X-Forwarded-For), Redis shared, SQLite. "
            "The attacker's 401s are the wrong passwords that reached the hasher.",
            "",
            markdown,
            END,
        ]
    )
    text = DOCS.read_text()
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    DOCS.write_text(text)
    print(f"\nwrote {DOCS.relative_to(ROOT)}")


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    parser.add_argument("--flood-seconds", type=float, default=FLOOD_SECONDS)
    args = parser.parse_args(argv)

    load_before = load()
    password = secrets.token_urlsafe(18)
    with tempfile.TemporaryDirectory(prefix="museum-flood-") as directory:
        work = Path(directory)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "museum.settings",
            "DEBUG": "false",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "false",
            "DATABASE_URL": f"sqlite:///{work / 'flood.sqlite3'}",
            "REDIS_URL": REDIS_URL,
            "MUSEUM_THROTTLE_USER_RATE": "100000/s",
            "MUSEUM_NUM_PROXIES": "1",
            "LOG_LEVEL": "WARNING",
        }
        for name in LIMITER_OFF:
            env.pop(name, None)  # the defaults are what is measured
        prepare_database(env, password)
        results = []
        for name, extra in (
            ("all limits", {}),
            ("one check at a time, no failure budgets", LIMITER_OFF),
        ):
            results.append(scenario(name, {**env, **extra}, password, work, args.flood_seconds))
            print_scenario(results[-1])

    machine = (
        f"{platform.machine()}, nproc {len(os.sched_getaffinity(0))}, "
        f"Python {platform.python_version()}, "
        f"load average {load_before} before, {load()} after"
    )
    markdown = table(results)
    print(f"\n{machine}\n\n{markdown}")
    if args.write_docs:
        write_docs(f"{markdown}\n\n{timelines(results)}", machine, args.flood_seconds)


if __name__ == "__main__":
    main()
