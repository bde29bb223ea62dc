"""Rate limits: requests per account and per address, and failed sign-ins.

The request throttles are DRF's, run after authentication. Failed sign-ins cannot wait for them:
each wrong password costs the hasher's full ~300 ms of CPU, so `refuse_if_locked_out` answers from
the cache before the hasher runs (MuseumBasicAuthentication calls it). All counters live in
Django's default cache, which every worker shares when REDIS_URL is set.

Ours, on DRF's throttle classes: the request rates count exactly with one atomic cache round trip
(RateThrottle says why not DRF's own counting).
"""

import logging
import math
import time
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache
from django.utils.crypto import salted_hmac
from rest_framework.exceptions import Throttled
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from museum.cache import count

security_log = logging.getLogger("museum.security")

# Tests move the clock to the next window instead of sleeping.
clock = time.time


def client_address(request) -> str:
    # DRF's own rule, so that NUM_PROXIES means the same here as in the request throttles.
    return BaseThrottle().get_ident(request)


class RateThrottle(SimpleRateThrottle):
    """A DRF throttle counting exactly, in fixed windows that open at a client's first request.

    Ours rather than DRF's own counting, which keeps every request's timestamp in a list it reads
    and writes back: two cache round trips a request, a list that grows with the rate, and two
    workers that read the list at once may both admit the last request. Here the shared cache
    counts atomically in one round trip (museum/cache.py), so the limit holds across workers and
    RateLimit-* headers tell the client exactly where it is.
    """

    def get_rate(self):
        # SimpleRateThrottle copies the rates when DRF is imported; reading them here lets a
        # changed REST_FRAMEWORK setting apply.
        return api_settings.DEFAULT_THROTTLE_RATES[self.scope]

    def allow_request(self, request, view):
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        hits, seconds_left = count(key, self.duration)
        remaining = max(self.num_requests - hits, 0)
        self.seconds_left = math.ceil(seconds_left)
        # view.headers goes onto every response of the view, the 429 included. Where two limits
        # apply (a purchase), they describe the one nearer to refusing.
        shown = view.headers.get("RateLimit-Remaining")
        if shown is None or remaining < int(shown):
            view.headers.update(
                {
                    "RateLimit-Limit": str(self.num_requests),
                    "RateLimit-Remaining": str(remaining),
                    "RateLimit-Reset": str(self.seconds_left),
                }
            )
        return hits <= self.num_requests

    def wait(self):
        return self.seconds_left


class AccountRateThrottle(RateThrottle):
    """MUSEUM_THROTTLE_USER_RATE requests per signed-in account."""

    scope = "user"

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class AddressRateThrottle(RateThrottle):
    """MUSEUM_THROTTLE_ANON_RATE requests per client address, for requests without an account."""

    scope = "anon"

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}


class PurchaseRateThrottle(AccountRateThrottle):
    """MUSEUM_THROTTLE_PURCHASE_RATE purchases per account, within its rate of requests.

    Each purchase mails an address its buyer chose: the request rate alone would let one account
    send hundreds of emails a minute.
    """

    scope = "purchase"


# Failed sign-ins are counted in fixed windows: the window's number is part of the key, so a
# lockout ends when its window does (a stranger cannot keep a real user out for long), Retry-After
# is exact, and museum.cache.count counts atomically across workers.


def _failure_counters(*, username: str, address: str) -> list[tuple[str, str, int]]:
    """(what is limited, cache key, allowed failures) for the current window."""
    window = int(clock() // settings.MUSEUM_AUTH_FAILURE_WINDOW_SECONDS)
    counters = [
        ("username", username, settings.MUSEUM_AUTH_FAILURES_PER_USERNAME),
        ("address", address, settings.MUSEUM_AUTH_FAILURES_PER_ADDRESS),
    ]
    return [
        # Hashed: a username can be any text a client sends, of any length.
        (kind, f"museum:auth-failures:{kind}:{_digest(kind, value)}:{window}", limit)
        for kind, value, limit in counters
    ]


def _digest(kind: str, value: str) -> str:
    return salted_hmac(f"museum.auth-failures.{kind}", value, algorithm="sha256").hexdigest()


def _seconds_left_in_window() -> int:
    window_seconds = settings.MUSEUM_AUTH_FAILURE_WINDOW_SECONDS
    return math.ceil(window_seconds - clock() % window_seconds)


def refuse_if_locked_out(*, username: str, address: str) -> None:
    """Raise Throttled (429) once the username or the address used up its failed sign-ins."""
    counters = _failure_counters(username=username, address=address)
    failures = cache.get_many([key for _, key, _ in counters])
    if any(failures.get(key, 0) >= limit for _, key, limit in counters):
        raise Throttled(
            wait=_seconds_left_in_window(),
            detail="Too many failed sign-ins for this account or from this address.",
            code="too_many_failed_sign_ins",
        )


def record_failed_sign_in(*, username: str, address: str) -> None:
    window_seconds = settings.MUSEUM_AUTH_FAILURE_WINDOW_SECONDS
    for kind, key, limit in _failure_counters(username=username, address=address):
        # A counter outlives its window (it expires a window after its first failure).
        failures, _ = count(key, window_seconds)
        if failures == limit:
            # %r: the username is whatever the client sent, line breaks included.
            security_log.warning(
                "Sign-in locked for %d s: %d failed sign-ins for %s %r (last from %s)",
                _seconds_left_in_window(),
                failures,
                kind,
                username if kind == "username" else address,
                address,
            )


# Longer than one password check takes; frees the slot if a worker dies in the middle of one.
CHECKING_SLOT_SECONDS = 5


@contextmanager
def one_password_check_at_a_time(*, address: str):
    """Run the body only while no other password check from this address runs; else 429.

    Until an address has spent its failed sign-ins, each wrong password costs the hasher's full
    CPU: a client sending them in parallel would keep every worker hashing for seconds. One check
    at a time per address leaves the other workers to everyone else. A credential verified before
    never gets here (the remembered credential is checked first).
    """
    key = f"museum:auth-checking:{_digest('address', address)}"
    if not cache.add(key, 1, timeout=CHECKING_SLOT_SECONDS):
        raise Throttled(
            wait=1,
            detail="Another sign-in from this address is being checked; retry in a second.",
            code="sign_in_in_progress",
        )
    try:
        yield
    finally:
        cache.delete(key)
