"""HTTP Basic authentication for every operation under /v1.1.

Django's password hasher costs ~300 ms of CPU per check, on purpose, and Basic auth sends the
password with every request. So a credential that passed the hasher is remembered in the cache
for MUSEUM_AUTH_CACHE_SECONDS after its last use, bound to the account's password hash, username
and active flag. Without it every request would pay the hasher: `python -m bench.profile
--endpoints signed-in` measures a request that hashes at about 400 times the CPU of a remembered
one.

With a shared cache (REDIS_URL) the remembered entry also keeps the account and its permission
names, valid while the kept accounts' version in the cache is the one they were kept with.
`bench.profile --endpoints signed-in,hours,check-in` measures what that saves: with the account
loaded by its key on every request instead (and its permissions when asked), the signed-in
request's CPU goes from 0.34 of the floor's to 0.18 (the query, and the connection's health
check before a request's first query), a cached read's from 0.29 to 0.16, and the door's
check-in, which asks has_perm, from 0.14 to 0.07 (three queries). Any change to an account, a
group, a permission or who holds which deletes that one version (a signal, now and again after
the commit, as museum/response_cache.py does; wired in museum/apps.py), so a password change, a
deactivation or a lost permission takes effect on the next request on every node. Every kept
account is then loaded once more: cheap, since such changes are rare, and simpler than finding
the accounts a change concerns. An update that sends no signal (QuerySet.update(), SQL by hand)
is seen when the version expires, MUSEUM_AUTH_CACHE_SECONDS after it was made. Without a shared
cache a signal cannot reach the other processes: the account is loaded on every request, which
sees every change at once, and Django loads its permissions when asked.

The entry and the version are read in the lockout's one cache round trip (`sign_in_lockout`),
which also counts a remembered request on its account's rate, so a remembered request costs no
round trip of its own. Hence no copy of the entries in each worker's
memory: bench.profile put the signed-in request at 0.30-0.33 of the floor's CPU without one and
0.32-0.34 with one, within the runs' noise.

The failed sign-in lockout comes first: a locked-out client gets the same 429 for a right
password as for a wrong one. While only the username is locked (guesses from everywhere), a
remembered credential still passes from the address where the hasher verified it, so the owner
keeps working and nobody else learns anything.
"""

import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.db import router
from django.utils.crypto import constant_time_compare, salted_hmac
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication, get_authorization_header

from museum.cache import read, read_along
from museum.kept import version_of
from museum.response_cache import now_and_on_commit
from museum.throttling import (
    account_rates,
    client_address,
    one_password_check_at_a_time,
    record_failed_sign_in,
    sign_in_lockout,
)

KEPT_ACCOUNTS_VERSION_KEY = "museum:kept-accounts-version"


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
    # Without the account: the one ModelBackend loaded may predate a change whose signal has
    # already run. The next request keeps one loaded after reading the version.
    _store(verified_credential_key(authorization), remembered)


def _store(key: str, remembered: dict) -> None:
    seconds = settings.MUSEUM_AUTH_CACHE_SECONDS
    if seconds > 0:
        cache.set(key, {**remembered, "expires_at": time.time() + seconds}, timeout=seconds)


def recall_verified_user(
    *, key: str, username: str, verified_at: str | None = None, read_already: dict | None = None
):
    """The account the header whose key is `key` was verified for, if it still may sign in with
    it (and, given `verified_at`, only if the hasher verified it from that address).
    `read_already` holds the cache values this request has read with the lockout."""
    read_already = read_already or {}
    remembered = read(key, read_already)
    if remembered is None:
        return None
    if verified_at is not None and not constant_time_compare(
        _hmac("address", verified_at), remembered["verified_at"]
    ):
        return None
    if remembered["expires_at"] - time.time() < settings.MUSEUM_AUTH_CACHE_SECONDS / 2:
        # Kept fresh while in use (one write per half lifetime): a busy client's credential
        # never expires under its parallel requests, each of which would then need the hasher.
        _store(key, remembered)
    user = _kept_account(remembered, read_already) if settings.SHARED_CACHE else None
    if user is None:
        user = _load_account(key, remembered)
    if user is None or not user.is_active or user.get_username() != username:
        cache.delete(key)
        return None
    return user


def _kept_account(remembered: dict, read_already: dict):
    """The account kept in the entry, if no account has changed since (else None)."""
    kept = remembered.get("account")
    if kept is None or kept["version"] != read(KEPT_ACCOUNTS_VERSION_KEY, read_already):
        return None
    user_model = get_user_model()
    # As a query deferring the password would load it: the hash never sits in the cache, and a
    # save() of this instance writes only the fields it holds.
    user = user_model.from_db(
        router.db_for_read(user_model), list(kept["fields"]), list(kept["fields"].values())
    )
    # An attribute of ours, which the user model does not declare.
    user.kept_permissions = KeptPermissions(  # type: ignore[attr-defined]
        user=frozenset(kept["permissions"]["user"]),
        group=frozenset(kept["permissions"]["group"]),
    )
    return user


def _load_account(key: str, remembered: dict):
    """The account from the database, if the remembered credential is still its password (else
    None); with a shared cache, kept in the entry for the next requests."""
    version = (
        version_of(KEPT_ACCOUNTS_VERSION_KEY, settings.MUSEUM_AUTH_CACHE_SECONDS)
        if settings.SHARED_CACHE
        else None
    )
    user = get_user_model()._default_manager.filter(pk=remembered["user_id"]).first()
    if user is None or not constant_time_compare(
        _hmac("password", user.password), remembered["password"]
    ):
        return None
    if version is not None:
        account = {"version": version, "fields": _fields(user), "permissions": _permissions(user)}
        _store(key, {**remembered, "account": account})
    return user


def forget_kept_accounts(**kwargs) -> None:
    """Any change to an account, a group, a permission or who holds which (museum/apps.py
    connects it): every kept account is stale, on every node sharing the cache."""
    action = kwargs.get("action")  # m2m_changed's: once the rows have changed
    if action is None or action.startswith("post_"):
        now_and_on_commit(_forget_version)


def _forget_version() -> None:
    cache.delete(KEPT_ACCOUNTS_VERSION_KEY)


def _fields(user) -> dict:
    """The account's column values but its password hash, by attribute name."""
    return {
        field.attname: getattr(user, field.attname)
        for field in type(user)._meta.get_fields()
        if field.concrete and not field.many_to_many and field.name != "password"
    }


def _permissions(user) -> dict:
    """The account's permission names, its own and its groups', as ModelBackend finds them."""
    backend = ModelBackend()
    return {
        "user": sorted(backend.get_user_permissions(user)),
        "group": sorted(backend.get_group_permissions(user)),
    }


@dataclass(frozen=True)
class KeptPermissions:
    """An account's permission names, kept with its remembered credential."""

    user: frozenset[str]
    group: frozenset[str]


class KeptPermissionsBackend(ModelBackend):
    """ModelBackend, answering an active account's model permissions from those kept with it
    when it came from the cache (`user.kept_permissions`): the door's has_perm needs no query.
    Object permissions and inactive accounts go to ModelBackend as ever."""

    def get_user_permissions(self, user_obj, obj=None):
        kept = getattr(user_obj, "kept_permissions", None)
        if kept is None or obj is not None or not user_obj.is_active:
            return super().get_user_permissions(user_obj, obj=obj)
        return set(kept.user)

    def get_group_permissions(self, user_obj, obj=None):
        kept = getattr(user_obj, "kept_permissions", None)
        if kept is None or obj is not None or not user_obj.is_active:
            return super().get_group_permissions(user_obj, obj=obj)
        return set(kept.group)


def view_reads(view, request) -> list[str]:
    """The cache keys `view`'s answer to `request` reads (its `cache_reads`, if it has one): the
    sign-in reads them in its own round trip, so that answer needs none of its own."""
    cache_reads = getattr(view, "cache_reads", None)
    return [] if cache_reads is None else cache_reads(request)


class MuseumBasicAuthentication(BasicAuthentication):
    www_authenticate_realm = "museum"

    def authenticate_credentials(self, userid, password, request=None):
        # PostgreSQL refuses NUL in text; without this a crafted header would reach the
        # database as a query error instead of a plain "wrong credentials".
        if "\x00" in userid or "\x00" in password:
            raise exceptions.AuthenticationFailed("Invalid username/password.")
        authorization = get_authorization_header(request)
        key = verified_credential_key(authorization)
        view = request.parser_context.get("view")
        address = client_address(request)
        # Before anything that depends on the password: a locked-out client must get the same
        # answer for a right one as for a wrong one. And before the hasher: DRF's throttles run
        # only after authentication, and a client sending wrong passwords as fast as it can
        # would otherwise keep every CPU hashing.
        lockout, read, request.rates_counted = sign_in_lockout(
            username=userid,
            address=address,
            # With what the view's answer reads from the cache (museum.cache's `read_along`).
            read_along=[key, KEPT_ACCOUNTS_VERSION_KEY, *view_reads(view, request)],
            # Counted here, in the same round trip, instead of by the view's throttles.
            rates=account_rates(view, userid),
            remembered_key=key,
        )
        if lockout is not None:
            return self._during_lockout(lockout, key, userid, address, read)
        user = recall_verified_user(key=key, username=userid, read_already=read)
        if user is not None:
            # For the view, read a moment ago. After a wait for the hasher it reads them itself.
            read_along(read)
            return (user, None)
        with one_password_check_at_a_time(address=address, credential=key):
            # The check this request waited for may have been this same credential's.
            user = recall_verified_user(key=key, username=userid)
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
    def _during_lockout(lockout, key: str, username: str, address: str, read: dict):
        if not lockout.locks_address:
            # Only the username is locked: its owner keeps working from where it signed in.
            user = recall_verified_user(
                key=key, username=username, verified_at=address, read_already=read
            )
            if user is not None:
                return (user, None)
            # Counted, so that a guesser sharing the owner's address gets no more tries at
            # telling 429 from 200 than it would get at telling 401 from 200.
            record_failed_sign_in(username=username, address=address)
        raise lockout.refusal()
