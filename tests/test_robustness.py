"""The service at its edges: oversized bodies, a lost database or cache, production TLS."""

import base64
import json
import logging
import os
import secrets
import subprocess
import sys
from contextlib import contextmanager

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings as django_settings
from django.db import close_old_connections, connection, connections
from django.http import HttpResponse
from django.test import AsyncClient
from django.test.client import FakePayload
from django.urls import path
from rest_framework.test import APIClient

from events.models import SpecialEvent
from tests.conftest import EVENT, assert_problem, basic_auth, client_for

ONE_MEGABYTE = 1024 * 1024
TEN_MEGABYTES = 10 * ONE_MEGABYTE


def event_body(size: int) -> bytes:
    """A valid event, padded with JSON whitespace to exactly `size` bytes."""
    raw = json.dumps(EVENT).encode()
    return raw + b" " * (size - len(raw))


def post_event(client, body: bytes):
    return client.generic("POST", "/v1.1/special-events", body, content_type="application/json")


@contextmanager
def database_unreachable():
    # Nothing listens on port 1, so every connection attempt is refused, as while PostgreSQL
    # restarts. Only the port changes: host, credentials and test database stay as they were.
    port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = "1"
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["PORT"] = port


def test_a_declared_body_over_the_limit_is_refused_and_nothing_is_written(staff_client):
    # The padding keeps the body a valid event: without the limit it would be created.
    response = post_event(staff_client, event_body(TEN_MEGABYTES))

    problem = assert_problem(response, 413)
    assert problem["title"] == "Payload Too Large"
    assert problem["limit"] == django_settings.MUSEUM_MAX_BODY_BYTES == 65536
    assert "65536 bytes" in problem["detail"]
    assert not SpecialEvent.objects.exists()


def test_a_body_at_the_limit_is_processed_and_one_byte_more_is_refused(staff_client):
    limit = django_settings.MUSEUM_MAX_BODY_BYTES

    assert post_event(staff_client, event_body(limit)).status_code == 201
    assert_problem(post_event(staff_client, event_body(limit + 1)), 413)
    assert SpecialEvent.objects.count() == 1


def test_a_body_longer_than_its_content_length_is_cut_off_at_the_limit(staff, settings):
    # Under ASGI Django hands the parser the whole body, whatever Content-Length said, and stops
    # it only at DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB): a client declaring 100 bytes could still
    # send one megabyte.
    # DEBUG as under `make run`, where Django would answer the refusal with its HTML debug page.
    settings.DEBUG = True
    response = async_to_sync(AsyncClient().request)(
        method="POST",
        path="/v1.1/special-events",
        headers=[
            (b"host", b"testserver"),
            (b"content-type", b"application/json"),
            (b"content-length", b"100"),
            (b"authorization", basic_auth(staff.username).encode()),
        ],
        _body_file=FakePayload(event_body(ONE_MEGABYTE)),
    )

    assert_problem(response, 413)
    assert not SpecialEvent.objects.exists()


def read_body(request):
    return HttpResponse(request.body)


# For the test below: a plain Django view under /v1.1, where no DRF exception handler helps.
urlpatterns = [path("v1.1/echo", read_body)]
handler400 = "museum.errors.bad_request"


@pytest.mark.urls(__name__)
def test_a_body_django_itself_refuses_to_read_is_a_413_too(client, settings):
    # Django's own bound (DATA_UPLOAD_MAX_MEMORY_SIZE) raises RequestDataTooBig, which Django
    # answers through handler400.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000

    response = client.generic("POST", "/v1.1/echo", b"x" * 2000, content_type="text/plain")

    assert_problem(response, 413)


def test_healthz_reports_database_and_cache_without_credentials(db):
    response = APIClient().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "cache": "ok"}
    assert "no-store" in response["Cache-Control"]
    schema = APIClient().get("/v1.1/openapi.json").json()
    assert not [url for url in schema["paths"] if "healthz" in url]


UNREACHABLE_REDIS = {
    # Nothing listens on port 1: a real connection refusal from the real Redis client.
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
    }
}


def test_the_api_answers_503_while_the_cache_is_unreachable(staff, settings):
    settings.CACHES = UNREACHABLE_REDIS

    response = client_for(staff).get("/v1.1/special-events")

    problem = assert_problem(response, 503)
    assert problem["code"] == "cache_unavailable"
    assert response["Retry-After"] == "5"


def test_a_request_counted_while_the_cache_is_unreachable_is_a_503(db, settings):
    settings.CACHES = UNREACHABLE_REDIS

    # Without an account: nothing but the address's request counter reads the cache.
    response = APIClient().get("/v1.1/openapi.json")

    assert assert_problem(response, 503)["code"] == "cache_unavailable"


def test_healthz_answers_503_when_the_cache_is_unreachable(db, settings):
    settings.CACHES = UNREACHABLE_REDIS

    response = APIClient().get("/healthz")

    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "database": "ok", "cache": "unavailable"}


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_healthz_answers_503_while_the_database_is_unreachable():
    client = APIClient()
    with database_unreachable():
        response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "database": "unavailable", "cache": "ok"}
    assert client.get("/healthz").status_code == 200


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_api_answers_503_while_the_database_is_unreachable_and_recovers(staff, caplog):
    client = client_for(staff)

    with database_unreachable(), caplog.at_level(logging.WARNING, logger="museum.errors"):
        response = client.get("/v1.1/special-events")

    problem = assert_problem(response, 503)
    assert response["Retry-After"] == "5"
    assert problem["code"] == "database_unavailable"
    assert "127.0.0.1" not in response.content.decode()
    [record] = [r for r in caplog.records if r.name == "museum.errors"]
    assert record.levelno == logging.WARNING
    assert "OperationalError" in record.getMessage()
    assert record.exc_info is None
    # Back as soon as the database is: no restart, no stale connection kept.
    assert client.get("/v1.1/special-events").status_code == 200


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_connection_the_database_dropped_is_replaced_on_the_next_request(staff):
    client = client_for(staff)
    assert client.get("/v1.1/special-events").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        [pid] = cursor.fetchone()
    # What a PostgreSQL restart does to every open connection, our kept-alive one included.
    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    other.close()
    # Django's handler does this as every request starts; the test client leaves it out.
    close_old_connections()

    # Django's health check (CONN_HEALTH_CHECKS), before the request's first query, finds the
    # connection dead and opens a new one.
    assert client.get("/v1.1/special-events").status_code == 200


def test_only_healthz_is_exempt_from_the_https_redirect(db, settings):
    settings.SECURE_SSL_REDIRECT = True
    client = APIClient()

    assert client.get("/healthz").status_code == 200
    response = client.get("/v1.1/museum-hours")
    assert response.status_code == 301
    assert response["Location"] == "https://testserver/v1.1/museum-hours"
    # Behind the proxy, which ended TLS and said so, the request goes on (to ask for credentials).
    assert client.get("/v1.1/museum-hours", HTTP_X_FORWARDED_PROTO="https").status_code == 401


def test_the_production_environment_passes_the_deploy_checks(tmp_path):
    environment = {
        "PATH": os.environ["PATH"],
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "museum.example.org",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'museum.sqlite3'}",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "MUSEUM_TIME_ZONE": "Europe/Amsterdam",
        "MUSEUM_PUBLIC_URL": "https://museum.example.org",
        # docs/security.md: what an operator must set besides.
        "MUSEUM_TICKET_SIGNING_KEYS": base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.org",
    }

    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=django_settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
