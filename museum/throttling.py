"""Rate limits: requests per account and per address, and failed sign-ins.

The request throttles are DRF's, run after authentication. Failed sign-ins cannot wait for them:
each wrong password costs the hasher's full ~300 ms of CPU, so `sign_in_lockout` answers from the
cache before the hasher runs (MuseumBasicAuthentication calls it). All counters live in
Django's default cache, which every worker shares when REDIS_URL is set.

Ours, on DRF's throttle classes: the request rates count exactly with one atomic cache round trip
(RateThrottle says why not DRF's own counting). A signed-in request's rate is counted in its
sign-in's round trip (`sign_in_lockout`, `account_rates`), so a remembered sign-in and its counts
cost one round trip.
"""

import functools
import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.utils.crypto import salted_hmac
from rest_framework.exceptions import Throttled
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from museum.cache import count, read_and_count

security_log = logging.getLogger("museum.security")


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

    scope: str
    # Set by SimpleRateThrottle.__init__ from the rate (DRF's stubs do not declare them).
    num_requests: int
    duration: int

    def get_rate(self):
        # SimpleRateThrottle copies the rates when DRF is imported; reading them here lets a
        # changed REST_FRAMEWORK setting apply.
        return api_settings.DEFAULT_THROTTLE_RATES[self.scope]

    def allow_request(self, request, view):
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        # A count the request's sign-in made in its round trip (account_rates).
        counted = getattr(request, "rates_counted", {}).pop(key, None)
        hits, seconds_left = counted or count(key, self.duration)
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
    """MUSEUM_THROTTLE_USER_RATE requests per signed-in account, by its username (which the
    sign-in knows before it has read the account)."""

    scope = "user"

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return self.key_for(request.user.get_username())

    @classmethod
    def key_for(cls, username: str) -> str:
        return cls.cache_format % {"scope": cls.scope, "ident": _digest("account", (username,))}


def account_rates(view, username: str) -> dict[str, int]:
    """The account rates `view` counts (DRF's `get_throttles`), for its sign-in to count them:
    each one's key for `username` and its window in seconds."""
    return {
        throttle.key_for(username): throttle.duration
        for throttle in (view.get_throttles() if view is not None else ())
        if isinstance(throttle, AccountRateThrottle)
    }


class AddressRateThrottle(RateThrottle):
    """MUSEUM_THROTTLE_ANON_RATE requests per client address, for requests without an account."""

    scope = "anon"

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}


class _Page:
    """What AddressRateThrottle sets its RateLimit headers on, for a view that is not DRF's."""

    headers: dict


def page_within_address_rate(request) -> bool:
    """AddressRateThrottle for a page outside DRF (a signed link opened without an account)."""
    page = _Page()
    page.headers = {}
    return AddressRateThrottle().allow_request(request, page)


class PurchaseRateThrottle(AccountRateThrottle):
    """MUSEUM_THROTTLE_PURCHASE_RATE purchases per account, within its rate of requests.

    Each purchase mails an address its buyer chose: the request rate alone would let one account
    send hundreds of emails a minute.
    """

    scope = "purchase"


class GiftCardRateThrottle(AccountRateThrottle):
    """MUSEUM_THROTTLE_GIFT_CARD_RATE gift card codes tried per account (a balance asked, a
    payment started with one), within its rate of requests."""

    scope = "giftcard"


class VoucherRateThrottle(AccountRateThrottle):
    """MUSEUM_THROTTLE_VOUCHER_RATE voucher codes checked per account, within its rate of
    requests."""

    scope = "voucher"


class GroupRequestRateThrottle(AccountRateThrottle):
    """MUSEUM_THROTTLE_GROUP_REQUEST_RATE group requests per account (POST /group-requests),
    within its rate of requests: each holds places and mails the address it names."""

    scope = "group_request"


class GroupFormRateThrottle(RateThrottle):
    """MUSEUM_THROTTLE_GROUP_REQUEST_RATE group requests sent through the public form per client
    address, signed in or not: the form needs no account."""

    scope = "group_request"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}


def page_within_group_request_rate(request) -> bool:
    """GroupFormRateThrottle for the public form's page, outside DRF."""
    page = _Page()
    page.headers = {}
    return GroupFormRateThrottle().allow_request(request, page)


# Failed sign-ins are counted in fixed windows: the window's number is part of the key, so a
# lockout ends when its window does (a stranger cannot keep a real user out for long), Retry-After
# is exact, and museum.cache.count counts atomically across workers.
#
# Three counters: a username from one address (the tight limit, so a stranger's guesses lock out
# only the stranger), an address whatever the usernames, and a username from everywhere (a higher
# ceiling, for guesses spread over many addresses).


@dataclass(frozen=True)
class _FailureCounter:
    kind: str  # what is limited, for the log
    key: str
    limit: int
    locks_address: bool  # whether reaching it locks out the address that reached it


@dataclass(frozen=True)
class Lockout:
    """The failed sign-ins a request is refused for, and until when."""

    locks_address: bool  # False when only the username is locked, from everywhere
    seconds_left: int

    def refusal(self) -> Throttled:
        return Throttled(
            wait=self.seconds_left,
            detail="Too many failed sign-ins for this account or from this address.",
            code="too_many_failed_sign_ins",
        )


def _failure_counters(*, username: str, address: str) -> list[_FailureCounter]:
    window = int(time.time() // settings.MUSEUM_AUTH_FAILURE_WINDOW_SECONDS)
    counters = [
        (
            "username and address",
            (username, address),
            settings.MUSEUM_AUTH_FAILURES_PER_USERNAME_AND_ADDRESS,
            True,
        ),
        ("address", (address,), settings.MUSEUM_AUTH_FAILURES_PER_ADDRESS, True),
        ("username", (username,), settings.MUSEUM_AUTH_FAILURES_PER_USERNAME, False),
    ]
    return [
        # Hashed: a username can be any text a client sends, of any length.
        _FailureCounter(
            kind,
            f"museum:auth-failures:{kind.replace(' ', '-')}:{_digest(kind, values)}:{window}",
            limit,
            locks_address,
        )
        for kind, values, limit, locks_address in counters
    ]


@functools.lru_cache(maxsize=1024)
def _digest(kind: str, values: tuple[str, ...]) -> str:
    # Kept per process: every request names its username and address, and a busy client's are
    # the same each time. JSON keeps ["a b", "c"] and ["a", "b c"] apart, whatever the username
    # holds.
    value = json.dumps(values)
    return salted_hmac(f"museum.auth-failures.{kind}", value, algorithm="sha256").hexdigest()


def _seconds_left_in_window() -> int:
    window_seconds = settings.MUSEUM_AUTH_FAILURE_WINDOW_SECONDS
    return math.ceil(window_seconds - time.time() % window_seconds)


def sign_in_lockout(
    *,
    username: str,
    address: str,
    read_along: Sequence[str] = (),
    rates: Mapping[str, int] | None = None,
    remembered_key: str = "",
) -> tuple[Lockout | None, dict, dict[str, tuple[int, float]]]:
    """The lockout this username from this address is under, if any: read before the hasher.

    With it, the values of the `read_along` keys (None where missing), read in the same cache
    round trip; and there, if `remembered_key` (one of them: the credential's) has a value, the
    request's hit on each of the account's `rates` (`account_rates`), for its throttles. Only the
    holder of a remembered password counts on its account's rates: a stranger's guesses count
    towards their own lockout, never on the account's rates.
    """
    counters = _failure_counters(username=username, address=address)
    keys = [*(counter.key for counter in counters), *read_along]
    if rates:
        found, counted = read_and_count(keys, counts=rates, if_present=remembered_key)
    else:
        found, counted = cache.get_many(keys), {}
    reached = [counter for counter in counters if (found.get(counter.key) or 0) >= counter.limit]
    along = {key: found.get(key) for key in read_along}
    if not reached:
        return None, along, counted
    lockout = Lockout(
        locks_address=any(counter.locks_address for counter in reached),
        seconds_left=_seconds_left_in_window(),
    )
    return lockout, along, counted


def record_failed_sign_in(*, username: str, address: str) -> None:
    window_seconds = settings.MUSEUM_AUTH_FAILURE_WINDOW_SECONDS
    for counter in _failure_counters(username=username, address=address):
        # A counter outlives its window (it expires a window after its first failure).
        failures, _ = count(counter.key, window_seconds)
        if failures == counter.limit:
            # %r: the username is whatever the client sent, line breaks included.
            security_log.warning(
                "Sign-in locked for %d s: %d failed sign-ins for %s %r from %s",
                _seconds_left_in_window(),
                failures,
                counter.kind,
                address if counter.kind == "address" else username,
                address,
            )


# Longer than one password check takes; frees the slot if a worker dies in the middle of one.
CHECKING_SLOT_SECONDS = 5
# How often a request waiting for the same credential's check looks whether it is over.
CHECKING_POLL_SECONDS = 0.02


@contextmanager
def one_password_check_at_a_time(*, address: str, credential: str):
    """Run the body only while no other password check from this address runs.

    Until an address has spent its failed sign-ins, each wrong password costs the hasher's full
    CPU: a client sending them in parallel would keep every worker hashing for seconds. One check
    at a time per address leaves the other workers to everyone else. A request carrying the same
    credential (an HMAC of its header) as the check under way waits for it, so a client's
    parallel first requests all pass once one has verified it; another credential gets a 429.
    """
    key = f"museum:auth-checking:{_digest('address', (address,))}"
    deadline = time.monotonic() + CHECKING_SLOT_SECONDS
    while not cache.add(key, credential, timeout=CHECKING_SLOT_SECONDS):
        holder = cache.get(key)
        if (holder is not None and holder != credential) or time.monotonic() > deadline:
            raise Throttled(
                wait=1,
                detail="Another sign-in from this address is being checked; retry in a second.",
                code="sign_in_in_progress",
            )
        time.sleep(CHECKING_POLL_SECONDS)
    try:
        yield
    finally:
        cache.delete(key)


class WalletRegistrationRateThrottle(AddressRateThrottle):
    """MUSEUM_THROTTLE_WALLET_REGISTRATION_RATE registrations and device logs per client address
    (Apple Wallet's web service, which has no account): on top of the address's request rate."""

    scope = "wallet_registration"


class WalletLinkRateThrottle(AddressRateThrottle):
    """MUSEUM_THROTTLE_WALLET_LINK_RATE passes asked for through the wallet links of the emails
    and the desk (/wallet/add/...) per client address: the links need no account, and each
    request may sign a pass or call Google."""

    scope = "wallet_link"
