"""Settings read from the environment: what they refuse at start, and their defaults."""

import os
import subprocess
import sys

from django.conf import settings

PRINT_RESPONSE_CACHE_SECONDS = (
    "from django.conf import settings; print(settings.MUSEUM_RESPONSE_CACHE_SECONDS)"
)


def manage(*arguments: str, **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], "DEBUG": "true", **environment},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cached_responses_are_kept_by_default_only_with_a_shared_cache():
    alone = manage("shell", "--no-imports", "-c", PRINT_RESPONSE_CACHE_SECONDS)
    shared = manage(
        "shell",
        "--no-imports",
        "-c",
        PRINT_RESPONSE_CACHE_SECONDS,
        REDIS_URL="redis://127.0.0.1:6379/0",
    )

    assert alone.stdout.strip() == "0", alone.stderr
    assert shared.stdout.strip() == "600", shared.stderr


def test_cached_responses_without_a_shared_cache_are_refused_at_start():
    result = manage("check", MUSEUM_RESPONSE_CACHE_SECONDS="600")

    assert result.returncode != 0
    # One line naming what to set, not a traceback (manage.py).
    assert result.stderr.startswith("manage.py: MUSEUM_RESPONSE_CACHE_SECONDS needs REDIS_URL")
    assert len(result.stderr.splitlines()) == 1


def test_turning_cached_responses_off_needs_no_shared_cache():
    assert manage("check", MUSEUM_RESPONSE_CACHE_SECONDS="0").returncode == 0


def test_order_settings_refuse_nonsense_at_start():
    for name, value, words in [
        ("MUSEUM_CURRENCY", "euro", "MUSEUM_CURRENCY must be an ISO 4217 code"),
        ("MUSEUM_HOLD_MINUTES", "0", "MUSEUM_HOLD_MINUTES must be 1+"),
        ("MUSEUM_CANCEL_HOURS_BEFORE", "-1", "MUSEUM_CANCEL_HOURS_BEFORE"),
        ("MUSEUM_PUBLIC_URL", "museum.example.org", "MUSEUM_PUBLIC_URL must start with https://"),
    ]:
        result = manage("check", **{name: value})

        assert result.returncode != 0, name
        assert words in result.stderr, result.stderr
