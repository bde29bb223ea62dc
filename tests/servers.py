"""Real servers for the tests that need them: gunicorn nodes, a slow mail server, and a PostgreSQL
cluster of our own.

Each is started in a context manager that always stops it, and waited for with a bounded
readiness poll (a probe, not a sleep standing in for one).
"""

import asyncio
import contextlib
import datetime as dt
import os
import pwd
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from aiosmtpd.controller import Controller
from django.conf import settings

GUNICORN = Path(sys.executable).with_name("gunicorn")
PG_BIN = Path("/usr/lib/postgresql/15/bin")
READY_TIMEOUT_SECONDS = 30
SECRET_KEY = secrets.token_urlsafe(50)  # one per test run, shared by every node


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url(settings_dict: dict) -> str:
    """A DATABASE_URL for the database Django is connected to (the test database)."""
    user = quote(settings_dict["USER"] or "")
    password = f":{quote(settings_dict['PASSWORD'])}" if settings_dict["PASSWORD"] else ""
    host = settings_dict["HOST"] or "127.0.0.1"
    port = settings_dict["PORT"] or 5432
    return f"postgres://{user}{password}@{host}:{port}/{quote(settings_dict['NAME'])}"


def stop_process_group(process: subprocess.Popen, *, grace: float = 30) -> None:
    """End a process started with `start_new_session=True` and everything it started: SIGTERM,
    then SIGKILL after `grace` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    # What it left running in its group (a block's background job) goes too.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def wait_until(ready, *, what: str, timeout: float = READY_TIMEOUT_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not ready after {timeout} s")
        time.sleep(0.1)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def gunicorn_node(
    *, environment: dict[str, str], log: Path, workers: int = 2, threads: int = 4
) -> Iterator[str]:
    """A production-like node (DEBUG off, its own processes, gunicorn.conf.py) on a free port;
    yields its URL."""
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "DEBUG": "false",
        "SECRET_KEY": SECRET_KEY,
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        "LOG_LEVEL": "WARNING",
        **environment,
    }
    command = [str(GUNICORN), "museum.wsgi", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", str(workers), "--threads", str(threads), "--graceful-timeout", "2"]
    # gunicorn 27's control socket has one default path per user: nodes would share it.
    command += ["--no-control-socket"]
    with open(log, "ab") as output:
        server = subprocess.Popen(
            command, cwd=settings.BASE_DIR, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: server.poll() is None and _healthy(url), what=f"gunicorn on {port}")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextmanager
def task_worker(
    database_url: str,
    log: Path,
    *,
    interval: float = 1,
    environment: dict[str, str] | None = None,
    queues: str = "*",
) -> Iterator[subprocess.Popen]:
    """`manage.py db_worker`, as production runs it beside the web server, polling the queue
    every `interval` seconds when it is empty; `queues`: those it works (by default all, where
    production runs one worker for `default` and one for `webhooks`)."""
    env = {
        "PATH": os.environ["PATH"],
        "DEBUG": "false",
        "SECRET_KEY": SECRET_KEY,
        "DATABASE_URL": database_url,
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        "LOG_LEVEL": "WARNING",
        **(environment or {}),
    }
    command = [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay"]
    command += ["--interval", str(interval), "--queue-name", queues]
    with open(log, "ab") as output:
        worker = subprocess.Popen(
            command, cwd=settings.BASE_DIR, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        yield worker
    finally:
        worker.terminate()
        worker.wait(timeout=10)


class StallingMailServer:
    """An SMTP server that holds each message it receives, unanswered, until the test lets it
    go (or STALL_SECONDS pass, under the client's EMAIL_TIMEOUT), then accepts it: a slow mail
    server, for the sender's behaviour meanwhile.

    aiosmtpd (already the tests' SMTP server) speaks the protocol and runs in a thread of its
    own; only the stall is ours, waited out in a thread so the server's loop stays free.
    """

    STALL_SECONDS = 8

    def __init__(self):
        self.held: queue.Queue[threading.Event] = queue.Queue()
        self.accepted: list[bytes] = []

    async def handle_DATA(self, server, session, envelope):
        release = threading.Event()
        self.held.put(release)
        await asyncio.to_thread(release.wait, self.STALL_SECONDS)
        self.accepted.append(envelope.original_content)
        return "250 2.0.0 Message accepted for delivery"

    def next_held(self, timeout: float = READY_TIMEOUT_SECONDS) -> threading.Event:
        """The next message's release, once the server holds it."""
        try:
            return self.held.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message reached the mail server in {timeout} s") from None


@contextmanager
def stalling_mail_server() -> Iterator[tuple[StallingMailServer, dict[str, str]]]:
    """A StallingMailServer on loopback; yields it and the environment that mails through it."""
    handler = StallingMailServer()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    environment = {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(controller.port),
        "EMAIL_TIMEOUT": "10",
    }
    try:
        yield handler, environment
    finally:
        while not handler.held.empty():  # nothing left waiting on the test
            handler.held.get().set()
        controller.stop()


# The open day in a node's database (tests/conftest.py, node_database).
NODE_DAY = dt.date.today() + dt.timedelta(days=3)
NODE_SETUP = f"""
from django.contrib.auth.models import User
from django.core.management import call_command
from hours.models import MuseumDay
from museum.accounts import partner_group, staff_group
call_command("migrate", verbosity=0)
User.objects.create(username="staff", is_staff=True, password={{password!r}}).groups.add(
    staff_group()
)
# A sales partner, as the tests' `visitor` is: its orders are confirmed without a payment.
User.objects.create(username="visitor", password={{password!r}}).groups.add(partner_group())
MuseumDay.objects.create(date="{NODE_DAY.isoformat()}", opens_at="09:00", closes_at="17:00")
"""


def manage(
    database: str, *arguments: str, environment: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """A manage.py command in a process of its own, as an operator runs one; what it printed."""
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=settings.BASE_DIR,
        env={
            "PATH": os.environ["PATH"],
            "DEBUG": "true",
            "DATABASE_URL": database,
            **(environment or {}),
        },
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )


def can_run_own_postgres() -> bool:
    if not (PG_BIN / "initdb").exists():
        return False
    return os.geteuid() != 0 or _postgres_account() is not None


def _postgres_account():
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        return None


class ThrowawayPostgres:
    """A PostgreSQL 15 cluster in a temporary folder, on a free port, to restart at will.

    PostgreSQL refuses to run as root; as root, its commands run as the `postgres` account.
    """

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres?connect_timeout=2"

    def _run(self, tool: str, *args: str) -> None:
        command = [str(PG_BIN / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    def _pg_ctl(self, *args: str) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 "
            f"-c unix_socket_directories={self.folder} -c fsync=off"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.folder / "data"),
            "-l",
            str(self.folder / "log"),
            "-o",
            options,
            "-w",
            *args,
        )

    def start(self) -> None:
        self._pg_ctl("start")

    def stop(self) -> None:
        # fast: every connection is cut at once, as in a crash or a failover.
        self._pg_ctl("-m", "fast", "stop")


@contextmanager
def throwaway_postgres() -> Iterator[ThrowawayPostgres]:
    folder = Path(tempfile.mkdtemp(prefix="museum-postgres-"))
    if os.geteuid() == 0:
        account = _postgres_account()
        os.chown(folder, account.pw_uid, account.pw_gid)
    cluster = ThrowawayPostgres(folder)
    try:
        cluster._run(
            "initdb",
            "-D",
            str(folder / "data"),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        cluster.start()
        yield cluster
    finally:
        try:
            cluster._pg_ctl("-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass  # never started, or already stopped
        shutil.rmtree(folder, ignore_errors=True)
