"""`make bench`: the service under a bounded load, each endpoint against a bare DRF floor.

1. Loads a museum's volume of rows into a PostgreSQL database of its own (bench/data.py), once;
   later runs only reset what a run uses up (bench/database.py).
2. Prints the query plan of every read (bench/plans.py).
3. Starts each server configuration (bench/servers.py) on its own loopback port with the
   production settings, signs the benchmark's accounts in once (the remembered sign-in lives in
   Redis, shared by every worker) and warms each server up on every endpoint.
4. Drives each endpoint with wrk (bench/wrk.lua) from a separate process, the servers taking
   turns (bench/driver.py), and reports requests/s, p50, p99, errors, the ratio to the floor
   measured by the same server in the same run, and the workers' resident memory.
5. Writes the figures into docs/performance.md, between its "bench results" markers.

    .venv/bin/python -m bench.run [--seconds 8] [--servers "gunicorn sync,granian"] [--reload]

Never point BENCH_DATABASE_URL at a database you care about: the benchmark empties its tables.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = Path("/tmp/museum-bench")

DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/museum_bench"
)
# Database 13 is tests/test_two_nodes.py's (it flushes it); 14 is the benchmark's alone.
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")

# Production settings, as docs/deployment.md has them, plus what loopback needs.
SERVICE_ENV = {
    # Production's settings with the floor routed (bench/settings.py).
    "DJANGO_SETTINGS_MODULE": "bench.settings",
    "DEBUG": "false",
    "SECRET_KEY": "bench-only-secret-key-4c1d2e9f8a7b6c5d4e3f2a1b0c9d8e7f",
    "ALLOWED_HOSTS": "127.0.0.1,testserver",
    "DATABASE_URL": DATABASE_URL,
    "REDIS_URL": REDIS_URL,
    # No TLS on loopback, so no redirect to it.
    "SECURE_SSL_REDIRECT": "false",
    # Each account sends about a hundred requests a second here; 600/min would answer 429. Every
    # request is still counted, one atomic round trip to Redis, as in production.
    "MUSEUM_THROTTLE_USER_RATE": "1000/s",
    # Purchases have their own limit too (30/min by default would refuse most of them here),
    # counted the same way.
    "MUSEUM_THROTTLE_PURCHASE_RATE": "1000/s",
    # And gift card codes tried (10/min by default), the same way; and group requests (10/hour).
    "MUSEUM_THROTTLE_GIFT_CARD_RATE": "1000/s",
    "MUSEUM_THROTTLE_GROUP_REQUEST_RATE": "1000/s",
    # A remembered sign-in outlives the run (the default 300 s would expire mid-measurement and
    # make each account pay PBKDF2 again there; in production a client pays it once per 300 s).
    "MUSEUM_AUTH_CACHE_SECONDS": "3600",
    # Held orders for the confirm endpoint are placed before the run: they must outlast it.
    "MUSEUM_HOLD_MINUTES": "600",
    # No mail server here. A purchase only enqueues its email; no task worker runs meanwhile.
    "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
    "LOG_LEVEL": "WARNING",
}


def parse_args(argv=None):
    from bench.servers import DEFAULT, SERVERS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=8, help="per endpoint and server")
    parser.add_argument("--slices", type=int, default=4, help="turns the servers take")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument(
        "--servers", default=",".join(DEFAULT), help=f"comma-separated, of: {', '.join(SERVERS)}"
    )
    parser.add_argument("--endpoints", default="", help="comma-separated; default: all")
    parser.add_argument("--reload", action="store_true", help="empty the tables and load again")
    parser.add_argument("--no-docs", action="store_true", help="leave docs/performance.md alone")
    return parser.parse_args(argv)


def setup_django() -> None:
    os.environ.update(SERVICE_ENV)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def main(argv=None) -> int:
    args = parse_args(argv)
    args.work, args.service_env = WORK, SERVICE_ENV
    started = time.monotonic()
    WORK.mkdir(parents=True, exist_ok=True)
    from bench import database

    database.create_if_missing(DATABASE_URL)
    setup_django()
    from bench import driver, plans, report  # Django's models load only after setup

    database.prepare(reload=args.reload)
    from django.core.cache import cache

    # Redis database 14 is the benchmark's alone: no cached response, counter or remembered
    # sign-in of an earlier run outlives a reload of the rows.
    cache.clear()
    read_plans = plans.explain_reads()
    (WORK / "plans.txt").write_text(plans.report(read_plans))
    plan_summary = plans.summary(read_plans)
    print(f"Query plans (in full in {WORK}/plans.txt):\n{plan_summary}\n", flush=True)
    workload = driver.write_requests(WORK, [key for key in args.endpoints.split(",") if key])
    machine = report.describe_machine()
    results = driver.run_servers(args, workload)
    elapsed = time.monotonic() - started
    machine["load_after"] = " / ".join(f"{n:.2f}" for n in os.getloadavg())
    (WORK / "results.json").write_text(json.dumps(results, indent=2))
    text = report.markdown(
        results, machine=machine, args=args, elapsed=elapsed, plan_summary=plan_summary
    )
    print(text)
    if not args.no_docs:
        report.write_docs(ROOT / "docs" / "performance.md", text)
    print(f"make bench took {elapsed:.0f} s; plans, requests and logs are in {WORK}/")
    # Missed targets are findings, not failures: the figures are in the docs either way.
    return 0


if __name__ == "__main__":
    sys.exit(main())
