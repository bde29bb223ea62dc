import base64
import functools
import importlib
import os
import signal
import uuid
from contextlib import contextmanager
from io import StringIO
from types import SimpleNamespace

import pytest
import redis
from django.contrib.auth.hashers import MD5PasswordHasher, PBKDF2PasswordHasher
from django.core.cache import cache
from django.core.management import call_command
from django.core.servers.basehttp import WSGIServer
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django_redis import get_redis_connection
from rest_framework.test import APIClient

from museum.accounts import create_account
from scripts.test_tools import PACKAGES, find_tool, install_command
from tests.factories import PASSWORD, UserFactory, door_member, partner_member, staff_member
from tests.servers import NODE_SETUP, database_url, manage
from tests.stripe_fake import stripe_fake  # noqa: F401 (the fixture, for every test)
from webhooks.services import forget_subscribed_types


def admission_statements() -> int:
    """The statements of a valid scan: the claim with its audit records, one data-modifying WITH
    on PostgreSQL, an UPDATE and an INSERT on SQLite (tickets/services.py, `_admit_valid`)."""
    return 1 if connection.vendor == "postgresql" else 2


def claims(queries) -> list[str]:
    """The door's claims among captured statements: each UPDATE of the tickets, whether alone or
    the first part of the data-modifying WITH that also records it."""
    found = (
        q["sql"].lstrip().removeprefix('WITH "admitted" AS (') for q in queries.captured_queries
    )
    return [sql for sql in found if sql.startswith("UPDATE")]


# pytest-django's live_server listens with Django's backlog of 10 connections; the concurrency
# tests open fifty at once, and on a busy machine the kernel dropped some of them (a
# ConnectionResetError in the client), which is not what those tests are about.
WSGIServer.request_queue_size = 128


PROBLEM = "application/problem+json"
EVENT = {
    "name": "Night at the museum",
    "location": "Main hall",
    "eventDescription": "Torches and stories.",
    "dates": ["2030-10-31"],
    "price": 10,
}


def assert_problem(response, status: int):
    assert response.status_code == status
    assert response["Content-Type"] == PROBLEM
    problem = response.json()
    assert problem["status"] == status
    assert problem["type"].startswith("urn:museum:problem:")
    assert problem["title"] and problem["detail"]
    return problem


@contextmanager
def counting_hashes(hasher_class=MD5PasswordHasher):
    """Counts password hashes computed: checks, and Django's dummy hash for unknown usernames."""
    counter = SimpleNamespace(count=0)
    original_encode = hasher_class.encode

    def counting_encode(hasher, *args, **kwargs):
        counter.count += 1
        return original_encode(hasher, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hasher_class, "encode", counting_encode)
        yield counter


def pytest_collection_modifyitems(config, items):
    # Row locks, real concurrency and a database server to lose exist only on PostgreSQL.
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL)")
    for item in items:
        if item.get_closest_marker("postgres_only"):
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    # The doc examples tests/test_docs.py did not run, each with the reason its doc gives.
    from tests.docs import NOT_RUN

    if NOT_RUN:
        terminalreporter.section("doc examples not run")
        for line in NOT_RUN:
            terminalreporter.write_line(line)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # `make test` installs these commands where it can (scripts/test_tools.py); CI must run them.
    for marker in item.iter_markers("needs_tool"):
        for command in marker.args:
            if find_tool(command) is None:
                why = f"needs {command}: {install_command([PACKAGES[command]])}, as root"
                if os.environ.get("CI"):
                    pytest.fail(f"{why} (CI is set: no skipping)", pytrace=False)
                pytest.skip(why)


def run_task_worker(queues: str = "*") -> str:
    """`manage.py db_worker --batch`: run every task that is due, as the worker does, then return
    its output. The worker sets its own SIGINT/SIGTERM handlers; the test run gets its back.
    Tests that call it are `django_db(transaction=True)`: between tasks the worker closes a
    connection left in a transaction, as Django does between requests."""
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    out = StringIO()
    try:
        call_command(
            "db_worker",
            batch=True,
            reload=False,
            startup_delay=False,
            interval=0,
            queue_name=queues,  # by default the webhooks' queue too
            stdout=out,
        )
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return out.getvalue()


# The data migration's own function makes the default categories again where a flush removed them.
create_default_categories = importlib.import_module(
    "orders.migrations.0001_squashed_0008_order_language"
).create_default_categories
name_for_one_and_several = importlib.import_module(
    "orders.migrations.0005_visitor_category_plural_name_and_change_email"
).name_for_one_and_several


@functools.cache
def migrated_apps():
    """The models as the migrations leave them, as the data migrations' functions expect: plain
    columns, without modeltranslation's reading of `name` in the active language."""
    return MigrationLoader(None, ignore_no_migrations=True).project_state().apps


@pytest.fixture(scope="session")
def httpserver_listen_address():
    """pytest-httpserver's server is one for the session, on the address of whichever test
    starts it: IPv4 loopback for all, as the webhooks' receivers are named and let through
    (MUSEUM_WEBHOOK_ALLOWED_HOSTS), whatever test runs first."""
    return ("127.0.0.1", 0)


@pytest.fixture(autouse=True)
def visitor_categories(request):
    """The categories the data migration makes, for every test that uses the database: a
    transactional test's flush removes them, and every sale prices by them."""
    uses_database = request.node.get_closest_marker("django_db") or {
        "db",
        "transactional_db",
        "live_server",
    } & set(request.fixturenames)
    if uses_database:
        request.getfixturevalue("db")
        create_default_categories(migrated_apps(), None)
        name_for_one_and_several(migrated_apps(), None)


@pytest.fixture(autouse=True)
def empty_cache():
    # The cache remembers verified credentials and counts failed sign-ins; each test starts
    # with none, as a fresh deployment would. The webhook types wanted are kept in the process
    # too (webhooks/services.py).
    cache.clear()
    forget_subscribed_types()
    yield
    cache.clear()
    forget_subscribed_types()


@pytest.fixture
def node_database(tmp_path):
    """The database a gunicorn node uses: the test database on PostgreSQL, a file of its own on
    SQLite (the suite's is in memory), with two accounts (PBKDF2, the nodes' hasher) and an open
    day, tests.servers.NODE_DAY. Tests that use it are `django_db(transaction=True)`."""
    if connection.vendor == "postgresql":
        url = database_url(connection.settings_dict)
    else:
        url = f"sqlite:///{tmp_path / 'museum.sqlite3'}"
    password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    manage(url, "shell", "-c", NODE_SETUP.format(password=password))
    return url


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # PBKDF2's million iterations would dominate the suite; what is tested here is who may
    # do what, not the hasher.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def response_cache(settings):
    """The response cache and drawn images kept in the cache, as with REDIS_URL (the settings refuse
    them without it): a test is one process, so its own cache is the one every request sees."""
    settings.MUSEUM_RESPONSE_CACHE_SECONDS = 600


TEST_REDIS = "redis://127.0.0.1:6379/8"


@pytest.fixture
def shared_redis_cache(settings):
    """A real Redis (database 8) as every worker shares it, under a key prefix of the test's own."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": TEST_REDIS,
            "KEY_PREFIX": f"test-{uuid.uuid4()}",
        }
    }
    settings.SHARED_CACHE = True
    try:
        cache.get("k")
    except redis.ConnectionError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    yield
    cache.clear()


def cache_commands(send) -> list[str]:
    """The names of the commands `send()` sends to the test's Redis database, as MONITOR sees them
    (a script's own commands are not round trips; its EVALSHA is)."""
    commands = []
    # A connection of its own: the requests' stays theirs, so none is made (and SELECTed) meanwhile.
    with redis.Redis.from_url(TEST_REDIS).monitor() as monitor:
        send()
        get_redis_connection("default").echo("sent")
        while (command := monitor.next_command())["command"] != "ECHO sent":
            if command["db"] == 8 and command.get("client_type") != "lua":
                commands.append(command["command"].split()[0])
    return commands


def basic_auth(username: str, password: str = PASSWORD) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=basic_auth(user.username))
    return client


def buy_event_ticket(client: APIClient, event, day):
    """POST /v1.1/tickets for one ticket of `event` on `day`, bought by `client`'s account."""
    body = {
        "ticketType": "event",
        "eventId": str(event.pk),
        "ticketDate": day.isoformat(),
        "email": "ada@example.com",
    }
    return client.post("/v1.1/tickets", body, format="json")


@pytest.fixture
def visitor(db):
    """The account most tests buy with: a sales partner, whose orders are confirmed at once (paid
    on account), so that a test of the sale needs no payment. tests/orders/test_payments.py
    buys as `online_visitor`, who pays through a provider."""
    return partner_member(username="visitor")


@pytest.fixture
def online_visitor(db):
    """A visitor's own account: an order with a price is held until a provider confirms it."""
    return UserFactory(username="online")


@pytest.fixture
def online_client(online_visitor):
    return client_for(online_visitor)


@pytest.fixture
def staff(db):
    return staff_member(username="staff")


@pytest.fixture
def bare_staff(db):
    """`is_staff` and no permission at all: may sign in to the admin, and nothing more."""
    return UserFactory(username="bare", is_staff=True)


@pytest.fixture
def door_staff(db):
    return door_member(username="door")


@pytest.fixture
def desk_client(client, db):
    """A browser session (admin login) of a member of the Museum staff group."""
    client.force_login(create_account(username="desk", password=PASSWORD, staff=True))
    return client


@pytest.fixture
def anonymous_client(db):
    return APIClient()


@pytest.fixture
def visitor_client(visitor):
    return client_for(visitor)


@pytest.fixture
def staff_client(staff):
    return client_for(staff)
