"""`manage.py check --deploy` refuses the settings that are only safe for local work."""

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import SystemCheckError

BASE_DIR = Path(settings.BASE_DIR)
SEED = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
# What docs/deployment.md's production section tells an operator to set.
PRODUCTION = {
    "SECRET_KEY": "a-production-secret-of-fifty-characters-or-more-0123456789",
    "DATABASE_URL": "sqlite:///unused.sqlite3",
    "ALLOWED_HOSTS": "museum.example.org",
    "MUSEUM_TICKET_SIGNING_KEYS": SEED,
    "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
    "EMAIL_HOST": "smtp.example.org",
    "MUSEUM_PUBLIC_URL": "https://museum.example.org",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {key: value for key, value in os.environ.items() if key not in PRODUCTION}
    base.pop("DEBUG", None)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def production(settings):
    settings.DEBUG = False
    settings.MUSEUM_TICKET_SIGNING_KEYS = [SEED]
    settings.EMAIL_BACKEND = PRODUCTION["EMAIL_BACKEND"]
    settings.SESSION_COOKIE_AGE = 8 * 60 * 60
    settings.MUSEUM_PUBLIC_URL = PRODUCTION["MUSEUM_PUBLIC_URL"]
    return settings


def deploy_check_errors() -> str:
    with pytest.raises(SystemCheckError) as refused:
        call_command("check", deploy=True)
    return str(refused.value)


def test_the_production_settings_pass(production):
    call_command("check", deploy=True)


def test_no_explicit_signing_keys_fail(production):
    production.MUSEUM_TICKET_SIGNING_KEYS = []

    errors = deploy_check_errors()

    assert "museum.E001" in errors and "MUSEUM_TICKET_SIGNING_KEYS" in errors
    assert "HINT" in errors


@pytest.mark.parametrize(
    "backend",
    [
        *(f"django.core.mail.backends.{kind}.EmailBackend" for kind in ("console", "locmem")),
        *(f"django.core.mail.backends.{kind}.EmailBackend" for kind in ("dummy", "filebased")),
        "museum.mail.ConsoleEmailBackend",
    ],
)
def test_an_email_backend_that_delivers_nothing_fails(production, backend):
    production.EMAIL_BACKEND = backend

    errors = deploy_check_errors()

    assert "museum.E002" in errors and "smtp.EmailBackend" in errors


def test_a_session_longer_than_a_day_fails(production):
    production.SESSION_COOKIE_AGE = 24 * 60 * 60 + 1

    assert "museum.E003" in deploy_check_errors()


def test_a_local_public_url_is_warned_of_unless_the_museum_words_cancelling_itself(production):
    production.MUSEUM_PUBLIC_URL = "http://127.0.0.1:8000"
    warned = StringIO()
    call_command("check", deploy=True, stderr=warned)

    production.MUSEUM_CANCEL_INSTRUCTIONS = "Call us on +31 20 000 0000."
    instructed = StringIO()
    call_command("check", deploy=True, stderr=instructed)

    assert "museum.W001" in warned.getvalue() and "MUSEUM_PUBLIC_URL" in warned.getvalue()
    assert "museum.W001" not in instructed.getvalue()


def test_local_work_and_the_plain_check_are_not_held_to_deployment(production):
    production.MUSEUM_TICKET_SIGNING_KEYS = []
    production.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    call_command("check")  # what make test runs, and the test servers' settings

    production.DEBUG = True
    call_command("check", deploy=True)


def test_the_documented_production_environment_passes_check_deploy():
    passed = manage("check", "--deploy", "--fail-level", "ERROR", **PRODUCTION)
    without_keys = manage("check", "--deploy", **{**PRODUCTION, "MUSEUM_TICKET_SIGNING_KEYS": ""})

    assert passed.returncode == 0, passed.stderr
    assert "museum.W001" not in passed.stderr  # its public URL is set
    assert without_keys.returncode != 0
    assert "museum.E001" in without_keys.stderr


def test_the_deployment_docs_name_what_an_operator_must_set():
    deployment = (BASE_DIR / "docs" / "deployment.md").read_text()
    production = deployment[deployment.index("## Production") :]

    for variable in PRODUCTION:
        assert variable in production, variable
    assert PRODUCTION["EMAIL_BACKEND"] in production
