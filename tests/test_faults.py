"""PostgreSQL goes away under load and comes back: 503s meanwhile, no half purchase, recovery.

The database is a throwaway cluster of this test's own, so the shared server is never restarted.
"""

import datetime as dt
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode

import psycopg
import pytest
import redis
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests.factories import PASSWORD
from tests.live_http import Answer, call, sign_in
from tests.servers import (
    can_run_own_postgres,
    gunicorn_node,
    task_worker,
    throwaway_postgres,
    wait_until,
)

pytestmark = [
    # Once per CI run (the PostgreSQL pass) is enough; its database is its own either way.
    pytest.mark.postgres_only,
    pytest.mark.skipif(not can_run_own_postgres(), reason="needs PostgreSQL 15's initdb"),
]

BUYERS = 4
# As in production, the workers share Redis: the buyer's password is checked once for all of them.
REDIS_URL = "redis://127.0.0.1:6379/11"  # a database of its own, flushed before and after
PHASE_TIMEOUT_SECONDS = 20
DAY = dt.date.today() + dt.timedelta(days=2)
PROBLEM = "application/problem+json"

SETUP = f"""
from django.contrib.auth.models import User
from django.core.management import call_command
from hours.models import MuseumDay
from museum.accounts import partner_group
call_command("migrate", verbosity=0)
# A sales partner: its purchases are sold at once, as the contract's are.
User.objects.create(username="buyer", password={{password!r}}).groups.add(partner_group())
User.objects.create(username="staff", password={{password!r}}, is_staff=True, is_superuser=True)
MuseumDay.objects.create(date="{DAY.isoformat()}", opens_at="09:00", closes_at="17:00")
"""


@dataclass
class Load:
    """Purchases from several threads until told to stop; every answer kept, by key."""

    url: str
    answers: dict[str, list[Answer]] = field(default_factory=dict)
    changed: threading.Condition = field(default_factory=threading.Condition)
    stopping: threading.Event = field(default_factory=threading.Event)

    def buy(self, key: str) -> Answer:
        body = {"ticketType": "general", "ticketDate": DAY.isoformat(), "email": "a@example.com"}
        answer = call(
            "POST", f"{self.url}/v1.1/tickets", username="buyer", body=body, idempotency_key=key
        )
        with self.changed:
            self.answers.setdefault(key, []).append(answer)
            self.changed.notify_all()
        return answer

    def run_buyer(self) -> None:
        for _ in range(2000):  # bounded even if nobody says stop
            if self.stopping.is_set():
                return
            self.buy(str(uuid.uuid4()))

    def count(self, status: int) -> int:
        return sum(a.status == status for answers in self.answers.values() for a in answers)

    def wait_for(self, status: int, more_than: int) -> None:
        with self.changed:
            reached = self.changed.wait_for(
                lambda: self.count(status) > more_than, timeout=PHASE_TIMEOUT_SECONDS
            )
        assert reached, f"no {status} answer within {PHASE_TIMEOUT_SECONDS} s"


def prepare(database_url: str) -> None:
    password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SETUP.format(password=password)],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], "DEBUG": "true", "DATABASE_URL": database_url},
        check=True,
        capture_output=True,
        timeout=60,
    )


@pytest.fixture
def shared_cache():
    cache = redis.Redis.from_url(REDIS_URL)
    cache.flushdb()
    yield REDIS_URL
    cache.flushdb()
    cache.close()


def test_a_database_restart_under_load_is_503s_then_recovery_with_nothing_half_done(
    tmp_path, shared_cache
):
    with throwaway_postgres() as database:
        prepare(database.url)
        environment = {
            "DATABASE_URL": database.url,
            "REDIS_URL": shared_cache,
            # Each buyer thread's requests would otherwise soon meet the per-account limits.
            "MUSEUM_THROTTLE_USER_RATE": "100000/min",
            "MUSEUM_THROTTLE_PURCHASE_RATE": "100000/min",
        }
        with gunicorn_node(environment=environment, log=tmp_path / "gunicorn.log") as url:
            load = Load(url)
            sign_in(url, username="buyer")
            with ThreadPoolExecutor(max_workers=BUYERS) as pool:
                buyers = [pool.submit(load.run_buyer) for _ in range(BUYERS)]
                try:
                    load.wait_for(201, more_than=BUYERS)
                    database.stop()
                    outage = load.buy("during-the-outage")
                    load.wait_for(503, more_than=BUYERS)
                    database.start()
                    # No restart of the service, no waiting: the next request reconnects.
                    recovered = load.buy("after-the-outage")
                    load.wait_for(201, more_than=load.count(201) + BUYERS)
                finally:
                    load.stopping.set()
                for buyer in buyers:
                    buyer.result()
            # A 503 leaves the client unsure; the same key makes the retry safe.
            retries = {
                key: load.buy(key) for key, [first] in load.answers.items() if first.status == 503
            }

        assert outage.status == 503 and outage.content_type == PROBLEM
        assert outage.json()["code"] == "database_unavailable"
        assert outage.headers["Retry-After"] == "5"
        assert recovered.status == 201
        statuses = {a.status for answers in load.answers.values() for a in answers}
        assert statuses <= {201, 409, 503}, statuses
        assert all(
            a.content_type == PROBLEM
            for answers in load.answers.values()
            for a in answers
            if a.status >= 400
        )
        assert {answer.status for answer in retries.values()} == {201}
        assert_nothing_half_done(database.url, load)


def assert_nothing_half_done(database_url: str, load: Load) -> None:
    bought = {
        answers[-1].json()["ticketId"]
        for answers in load.answers.values()
        if answers[-1].status == 201
    }
    with psycopg.connect(database_url) as db:
        tickets = {str(row[0]) for row in db.execute("SELECT id FROM tickets_ticket")}
        [emails] = db.execute("SELECT count(*) FROM orders_order").fetchone()
        [lost] = db.execute(
            "SELECT count(*) FROM orders_order"
            " WHERE confirmation_sent_at IS NULL AND confirmation_task_id = ''"
        ).fetchone()
        [sold] = db.execute("SELECT sold FROM hours_museumday WHERE date = %s", [DAY]).fetchone()
    # Every 201 is a ticket, every ticket a 201 (after the retries), each with its place and
    # its order and email: nothing was written without the rest.
    assert tickets == bought
    assert sold == emails == len(tickets)
    assert lost == 0  # each email went out, or is due for the task worker


# Enough sequential requests to reach each worker, several times over.
PROBES = 8
# The task worker's polls when the queue is empty: far apart, so the restart falls between two of
# them and the first poll after it meets a connection the database dropped.
WORKER_INTERVAL_SECONDS = 5


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the redirect itself is the answer under test


BROWSER = urllib.request.build_opener(NoRedirects)


def fetch(url: str, *, cookies: str = "", form: dict | None = None) -> Answer:
    """A browser's request (no credentials, no redirects followed), with its cookies."""
    request = urllib.request.Request(
        url,
        data=None if form is None else urlencode(form).encode(),
        headers={"Cookie": cookies} if cookies else {},
    )
    try:
        with BROWSER.open(request, timeout=30) as response:
            return Answer(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers, error.read())


def cookie(answer: Answer, name: str) -> str:
    # The cookies are Secure (DEBUG is off), which a cookie jar would not send over plain HTTP.
    jar = SimpleCookie()
    for header in answer.headers.get_all("Set-Cookie") or []:
        jar.load(header)
    return jar[name].value


def admin_session(url: str) -> str:
    """The Cookie header of staff signed in through the admin's login form."""
    page = fetch(f"{url}/admin/login/")
    csrf = cookie(page, "csrftoken")
    [token] = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    form = {"csrfmiddlewaretoken": token, "username": "staff", "password": PASSWORD}
    signed_in = fetch(f"{url}/admin/login/?next=/admin/", cookies=f"csrftoken={csrf}", form=form)
    assert signed_in.status == 302, signed_in.content
    return f"sessionid={cookie(signed_in, 'sessionid')}"


def email_sent(database_url: str, ticket_id: str) -> bool:
    with psycopg.connect(database_url) as db:
        [sent] = db.execute(
            "SELECT o.confirmation_sent_at IS NOT NULL FROM orders_order o"
            " JOIN tickets_ticket t ON t.order_id = o.id WHERE t.id = %s",
            [ticket_id],
        ).fetchone()
    return sent


def test_after_a_restart_the_first_request_to_every_entry_point_answers(tmp_path, shared_cache):
    with throwaway_postgres() as database:
        prepare(database.url)
        environment = {"DATABASE_URL": database.url, "REDIS_URL": shared_cache}
        node = gunicorn_node(environment=environment, log=tmp_path / "gunicorn.log")
        with node as url:
            session = admin_session(url)
            sign_in(url, username="buyer")

            def buy() -> str:
                body = {"ticketType": "general", "ticketDate": DAY.isoformat(), "email": "a@b.org"}
                bought = call("POST", f"{url}/v1.1/tickets", username="buyer", body=body)
                assert bought.status == 201, bought.content
                return bought.json()["ticketId"]

            def first_requests_after_a_restart(request) -> list[Answer]:
                # Every worker holds connections from the requests before; a restart cuts them,
                # and nothing reaches the service until these requests do.
                for _ in range(2 * PROBES):
                    request()
                database.stop()
                database.start()
                return [request() for _ in range(PROBES)]

            probes = {
                "healthz": (lambda: fetch(f"{url}/healthz"), 200),
                "API read": (
                    lambda: call("GET", f"{url}/v1.1/museum-hours", username="buyer"),
                    200,
                ),
                "admin login page": (lambda: fetch(f"{url}/admin/login/"), 200),
                "admin, signed in": (lambda: fetch(f"{url}/admin/", cookies=session), 200),
                "door": (lambda: fetch(f"{url}/door/"), 302),
                "door, signed in": (lambda: fetch(f"{url}/door/", cookies=session), 200),
            }
            statuses = {
                name: [answer.status for answer in first_requests_after_a_restart(request)]
                for name, (request, _) in probes.items()
            }

            door = fetch(f"{url}/door/")

            # The task worker, started now: its connection is live (it sent one email), then
            # the database restarts while it waits for its next poll, which must send what was
            # bought since.
            worker_log = tmp_path / "worker.log"
            with task_worker(database.url, worker_log, interval=WORKER_INTERVAL_SECONDS) as worker:
                before = buy()
                wait_until(lambda: email_sent(database.url, before), what="the email before")
                database.stop()
                database.start()
                after = buy()
                wait_until(
                    lambda: email_sent(database.url, after),
                    what="the email bought after the restart",
                    timeout=3 * WORKER_INTERVAL_SECONDS,
                )
                worker_alive = worker.poll() is None

        assert {**statuses, "task worker alive": worker_alive} == {
            **{name: [status] * PROBES for name, (_, status) in probes.items()},
            "task worker alive": True,
        }
        assert door.headers["Location"] == "/admin/login/?next=/door/"
