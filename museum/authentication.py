"""HTTP Basic authentication for every operation under /v1.1.

Django's password hasher costs ~300 ms of CPU per check, on purpose, and Basic auth sends the
password with every request. So a credential that passed the hasher is remembered for
MUSEUM_AUTH_CACHE_SECONDS in the shared cache, bound to the account's current password hash,
username and active flag: later requests skip the hasher, while a password change, a
deactivation or a deletion takes effect on the next request. Each worker keeps a copy of the
entries it has read, so a returning client costs one query for its account and no cache trip.
"""

import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils.crypto import constant_time_compare, salted_hmac
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication, get_authorization_header

from museum.prepared import PreparedQuery
from museum.throttling import (
    client_address,
    one_password_check_at_a_time,
    record_failed_sign_in,
    refuse_if_locked_out,
)

# Tests move the clock instead of waiting for a remembered credential to expire.
clock = time.time

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


def remember_verified_credential(*, authorization: bytes, user) -> None:
    seconds = settings.MUSEUM_AUTH_CACHE_SECONDS
    if seconds <= 0:
        return
    remembered = {
        "user_id": user.pk,
        "password": _hmac("password", user.password),
        # Carried in the entry so that this process's copy expires with the shared one.
        "expires_at": clock() + seconds,
    }
    key = verified_credential_key(authorization)
    cache.set(key, remembered, timeout=seconds)
    _remember_here(key, remembered)


def recall_verified_user(*, authorization: bytes, username: str):
    """The account this exact header was verified for, if it still may sign in with it."""
    key = verified_credential_key(authorization)
    remembered = remembered_here.get(key)
    if remembered is None:
        remembered = cache.get(key)
        if remembered is None:
            return None
        _remember_here(key, remembered)
    if clock() >= remembered["expires_at"]:  # expired: no need to load the account
        _forget(key)
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
        user = recall_verified_user(authorization=authorization, username=userid)
        if user is not None:
            # Proven and free to check, so accepted even while its username is locked out.
            return (user, None)
        # Before the hasher: DRF's throttles run only after authentication, and a client sending
        # wrong passwords as fast as it can would otherwise keep every CPU hashing.
        address = client_address(request)
        refuse_if_locked_out(username=userid, address=address)
        with one_password_check_at_a_time(address=address):
            try:
                user, _ = super().authenticate_credentials(userid, password, request)
            except exceptions.AuthenticationFailed:
                record_failed_sign_in(username=userid, address=address)
                raise
        remember_verified_credential(authorization=authorization, user=user)
        return (user, None)
