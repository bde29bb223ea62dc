"""HTTP Basic authentication for every operation under /v1.1.

Django's password hasher costs ~300 ms of CPU per check, on purpose, and Basic auth sends the
password with every request. So a credential that passed the hasher is remembered in the shared
cache for MUSEUM_AUTH_CACHE_SECONDS after its last use, bound to the account's current password
hash, username and active flag: later requests skip the hasher, while a password change, a
deactivation or a deletion takes effect on the next request. Each worker keeps a copy of the
entries it has read, so a returning client costs one query for its account and no cache trip.

The failed sign-in lockout comes first: a locked-out client gets the same 429 for a right
password as for a wrong one. While only the username is locked (guesses from everywhere), a
remembered credential still passes from the address where the hasher verified it, so the owner
keeps working and nobody else learns anything.
"""

import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.utils.crypto import constant_time_compare, salted_hmac
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication, get_authorization_header

from museum.prepared import PreparedQuery
from museum.throttling import (
    client_address,
    one_password_check_at_a_time,
    record_failed_sign_in,
    sign_in_lockout,
)

# This process's copies of the shared cache's entries, in front of it: a request whose header
# this worker has seen needs no cache round trip. Safe to keep because the account is loaded on
# every request anyway; bounded, since each distinct header adds one.
remembered_here: dict[str, dict] = {}
REMEMBERED_HERE_MAX = 10_000


def _hmac(purpose: str, value: str | bytes) -> str:
    return salted_hmac(f"museum.authentication.{purpose}", value, algorithm="sha256").hexdigest()


def verified_credential_key(authorization: bytes) -> str:
    # An HMAC with SECRET_KEY, never the header: whoever reads the cache learns no password.
    return f"museum:verified-credential:{_hmac('credential', authorization)}"


def remember_verified_credential(*, authorization: bytes, user, address: str) -> None:
    remembered = {
        "user_id": user.pk,
        "password": _hmac("password", user.password),
        # Where the hasher verified it: the one place it still passes while its username is locked.
        "verified_at": _hmac("address", address),
    }
    _store(verified_credential_key(authorization), remembered)


def _store(key: str, remembered: dict) -> None:
    seconds = settings.MUSEUM_AUTH_CACHE_SECONDS
    if seconds <= 0:
        return
    # Carried in the entry so that this process's copy expires with the shared one.
    remembered = {**remembered, "expires_at": time.time() + seconds}
    cache.set(key, remembered, timeout=seconds)
    _remember_here(key, remembered)


def _recall(key: str) -> dict | None:
    now = time.time()
    remembered = remembered_here.get(key)
    if remembered is None or now >= remembered["expires_at"]:
        # Another worker may have kept the shared entry fresh meanwhile.
        remembered = cache.get(key)
        if remembered is None or now >= remembered["expires_at"]:
            remembered_here.pop(key, None)
            return None
        _remember_here(key, remembered)
    if remembered["expires_at"] - now < settings.MUSEUM_AUTH_CACHE_SECONDS / 2:
        # Kept fresh while in use (one write per half lifetime): a busy client's credential
        # never expires under its parallel requests, each of which would then need the hasher.
        _store(key, remembered)
    return remembered


def recall_verified_user(*, authorization: bytes, username: str, verified_at: str | None = None):
    """The account this exact header was verified for, if it still may sign in with it (and,
    given `verified_at`, only if the hasher verified it from that address)."""
    key = verified_credential_key(authorization)
    remembered = _recall(key)
    if remembered is None:
        return None
    if verified_at is not None and not constant_time_compare(
        _hmac("address", verified_at), remembered["verified_at"]
    ):
        return None
    # Loading the account on every request is what binds the remembered credential to it: a
    # changed password hash, a deactivation or a deletion is seen at once, on every node.
    user = load_account(remembered["user_id"])
    if (
        user is None
        or not user.is_active
        or user.get_username() != username
        or not constant_time_compare(_hmac("password", user.password), remembered["password"])
    ):
        _forget(key)
        return None
    return user


def _forget(key: str) -> None:
    remembered_here.pop(key, None)
    cache.delete(key)


def _remember_here(key: str, remembered: dict) -> None:
    if len(remembered_here) >= REMEMBERED_HERE_MAX:
        # Start over rather than pick entries to drop: safe while other threads read and write,
        # and each entry comes back from the shared cache on its client's next request.
        remembered_here.clear()
    remembered_here[key] = remembered


# As `User.objects.filter(pk=pk).first()` would send it, built once per process.
_ACCOUNT_BY_PK = PreparedQuery(lambda: get_user_model()._default_manager.filter(pk=0))


def load_account(pk: int):
    """The account with this primary key, or None: one prepared query (museum/prepared.py)."""
    return _ACCOUNT_BY_PK.first(pk)


class MuseumBasicAuthentication(BasicAuthentication):
    www_authenticate_realm = "museum"

    def authenticate_credentials(self, userid, password, request=None):
        # PostgreSQL refuses NUL in text; without this a crafted header would reach the
        # database as a query error instead of a plain "wrong credentials".
        if "\x00" in userid or "\x00" in password:
            raise exceptions.AuthenticationFailed("Invalid username/password.")
        authorization = get_authorization_header(request)
        address = client_address(request)
        # Before anything that depends on the password: a locked-out client must get the same
        # answer for a right one as for a wrong one. And before the hasher: DRF's throttles run
        # only after authentication, and a client sending wrong passwords as fast as it can
        # would otherwise keep every CPU hashing.
        lockout = sign_in_lockout(username=userid, address=address)
        if lockout is not None:
            return self._during_lockout(lockout, authorization, userid, address)
        user = recall_verified_user(authorization=authorization, username=userid)
        if user is not None:
            return (user, None)
        with one_password_check_at_a_time(
            address=address, credential=verified_credential_key(authorization)
        ):
            # The check this request waited for may have been this same credential's.
            user = recall_verified_user(authorization=authorization, username=userid)
            if user is not None:
                return (user, None)
            # ModelBackend itself, not django.contrib.auth.authenticate(): django-axes, which
            # guards the admin login through the latter, has no part in the API's limits.
            user = ModelBackend().authenticate(request, username=userid, password=password)
            if user is None:
                record_failed_sign_in(username=userid, address=address)
                raise exceptions.AuthenticationFailed("Invalid username/password.")
        remember_verified_credential(authorization=authorization, user=user, address=address)
        return (user, None)

    @staticmethod
    def _during_lockout(lockout, authorization: bytes, username: str, address: str):
        if not lockout.locks_address:
            # Only the username is locked: its owner keeps working from where it signed in.
            user = recall_verified_user(
                authorization=authorization, username=username, verified_at=address
            )
            if user is not None:
                return (user, None)
            # Counted, so that a guesser sharing the owner's address gets no more tries at
            # telling 429 from 200 than it would get at telling 401 from 200.
            record_failed_sign_in(username=username, address=address)
        raise lockout.refusal()
