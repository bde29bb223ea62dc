"""Prove the contract against the live server: gunicorn on loopback, schemathesis against it.

Runs twice: with the public contract file as the schema, then with our generated schema
(/v1.1/openapi.json, which adds check-in, capacity and headers). Any server error or mismatch
fails the run. The database is a fresh one beside DATABASE_URL's (PostgreSQL) or a temporary
SQLite file. Called by `make conformance`, which `make test` includes.
"""

import base64
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CONTRACT = ROOT / "contract" / "museum-api-1.1.1.yaml"
STAFF, STAFF_PASSWORD = "conformance-staff", secrets.token_urlsafe(16)
SELLS_ON_ACCOUNT = (
    "from django.contrib.auth.models import User; from museum.accounts import partner_group; "
    f"User.objects.get(username={STAFF!r}).groups.add(partner_group())"
)
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
]
# Status codes are checked by a narrowed copy of the stock check (scripts/conformance_hooks.py,
# reasons in docs/contract-notes.md); every other check is stock.
CHECKS = [
    "contract_status_code_conformance" if check == "status_code_conformance" else check
    for check in CHECKS
]
SEED = os.environ.get("CONFORMANCE_SEED", "20261122")
MAX_EXAMPLES = os.environ.get("CONFORMANCE_MAX_EXAMPLES", "40")


def conformance_database(tmp: str) -> str:
    """A database of its own, so the run neither sees nor leaves data anywhere else."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        return f"sqlite:///{tmp}/conformance.sqlite3"
    parts = urlsplit(url)
    # Named after DATABASE_URL's own, so runs against different databases never share one.
    name = f"{parts.path.lstrip('/') or 'museum'}_conformance"
    admin = dict(os.environ, PGCONNECT_TIMEOUT="5")
    server = ["-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 5432)]
    user = ["-U", parts.username or "postgres"]
    subprocess.run(["dropdb", "--if-exists", *server, *user, name], check=True, env=admin)
    subprocess.run(["createdb", *server, *user, name], check=True, env=admin)
    return urlunsplit(parts._replace(path=f"/{name}"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_environment(database_url: str) -> dict:
    return dict(
        os.environ,
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL=database_url,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="false",
        # Schemathesis sends thousands of requests from one account, purchases among them: lift
        # the per-account rates.
        MUSEUM_THROTTLE_USER_RATE="1000000/min",
        MUSEUM_THROTTLE_PURCHASE_RATE="1000000/min",
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        # Thousands of deliberate 4xx answers would each log a warning; errors still show.
        LOG_LEVEL="ERROR",
    )


def manage(env: dict, *args: str, stdin: str | None = None) -> None:
    subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        text=True,
        check=True,
    )


def wait_until_ready(base: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit("gunicorn exited before it was ready")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)  # a readiness poll, bounded by the deadline
    sys.exit("gunicorn did not become ready in 30 s")


def api_call(origin: str, method: str, path: str, body: dict | None = None):
    credentials = base64.b64encode(f"{STAFF}:{STAFF_PASSWORD}".encode()).decode()
    request = urllib.request.Request(
        f"{origin}/v1.1{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Basic {credentials}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def buy_a_ticket(origin: str) -> str:
    """A ticket for the second open day (today's sale ends at closing), whose image
    getTicketCode can then fetch."""
    second_open_day = api_call(origin, "GET", "/museum-hours?limit=2")[1]["date"]
    body = {"ticketType": "general", "ticketDate": second_open_day, "email": "st@example.com"}
    return api_call(origin, "POST", "/tickets", body)["ticketId"]


def place_an_order(origin: str) -> dict:
    """A held order of two tickets in the first slot still on sale of the first open days (timed:
    seeded with slots; today's end their sale as the day goes), whose id the order operations
    then use; and that day, for the slots."""
    on_sale = [
        (day["date"], slot["entryTime"])
        for day in api_call(origin, "GET", "/museum-hours?limit=2")
        for slot in api_call(origin, "GET", f"/museum-hours/{day['date']}/slots")
        if not slot["over"]
    ]
    first_open_day, entry_time = on_sale[0]
    body = {
        "ticketType": "general",
        "ticketDate": first_open_day,
        "entryTime": entry_time,
        "email": "st@example.com",
        "lines": [{"category": "adult", "quantity": 1}, {"category": "child", "quantity": 1}],
        "hold": True,
    }
    order = api_call(origin, "POST", "/orders", body)
    return {
        "CONFORMANCE_ORDER_ID": order["orderId"],
        "CONFORMANCE_ORDER_TICKET_ID": order["tickets"][0]["ticketId"],
        "CONFORMANCE_SLOTS_DATE": first_open_day,
    }


def schemathesis(
    schema: str, base_url: str, report: str, checks: list[str], env: dict, *extra: str
) -> int:
    command = [
        str(BIN / "schemathesis"),
        "--config-file",
        str(ROOT / "scripts" / "schemathesis.toml"),
        "run",
        schema,
        "--url",
        base_url,
        "--auth",
        f"{STAFF}:{STAFF_PASSWORD}",
        "--checks",
        ",".join(checks),
        "--mode",
        "all",
        "--seed",
        SEED,
        "--max-examples",
        MAX_EXAMPLES,
        "--phases",
        "examples,coverage,fuzzing,stateful",
        # One worker: with two, CPython 3.11's ast.parse (which hypothesis calls to describe
        # lambdas) races between threads and fails the run with a SystemError.
        "--workers",
        "1",
        "--no-color",
        "--report",
        "junit",
        "--report-junit-path",
        report,
        *extra,
    ]
    print("$", " ".join(command).replace(STAFF_PASSWORD, "***"), flush=True)
    return subprocess.run(command, cwd=ROOT, env=env).returncode


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        env = server_environment(conformance_database(tmp))
        manage(env, "migrate", "--noinput", "-v", "0")
        manage(env, "seed_hours", "--days", "400")
        # The first days get entry slots, so listEntrySlots and timed orders have some.
        manage(env, "seed_hours", "--days", "7", "--slot-minutes", "60", "--slot-capacity", "500")
        manage(env, "create_account", STAFF, "--staff", "--password-stdin", stdin=STAFF_PASSWORD)
        # It buys too: as a sales partner (on account), so a purchase is a ticket at once, as
        # the contract answers it (an online account's waits for its payment: 409 `not_paid`).
        manage(env, "shell", "-c", SELLS_ON_ACCOUNT)
        port = free_port()
        # SQLite takes one writer at a time: a second worker would only add "database is
        # locked" answers (503) that say nothing about the contract.
        workers = "2" if env["DATABASE_URL"].startswith("postgres") else "1"
        # No control socket: gunicorn 27 puts every instance's at one path by default.
        gunicorn = [str(BIN / "gunicorn"), "museum.wsgi", "--no-control-socket"]
        server = subprocess.Popen(
            [*gunicorn, "--bind", f"127.0.0.1:{port}", "--workers", workers], cwd=ROOT, env=env
        )
        try:
            origin = f"http://127.0.0.1:{port}"
            wait_until_ready(origin, server)
            reports = ROOT / "test-artifacts"
            reports.mkdir(exist_ok=True)
            st_env = dict(
                os.environ,
                CONFORMANCE_TICKET_ID=buy_a_ticket(origin),
                **place_an_order(origin),
                SCHEMATHESIS_HOOKS="conformance_hooks",
                PYTHONPATH=str(ROOT / "scripts"),
            )
            failures = schemathesis(
                str(CONTRACT),
                f"{origin}/v1.1",
                str(reports / "conformance-contract.xml"),
                CHECKS,
                st_env,
                # The contract's operations answered in German: same fields, other words. Our
                # schema documents Accept-Language, so its run sends varied values of its own.
                "--header",
                "Accept-Language: de",
            )
            failures |= schemathesis(
                f"{origin}/v1.1/openapi.json",
                f"{origin}/v1.1",
                str(reports / "conformance-generated.xml"),
                CHECKS,
                st_env,
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
    return failures


if __name__ == "__main__":
    sys.exit(main())
