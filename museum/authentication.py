"""HTTP Basic authentication for every operation under /v1.1.

Django's password hasher costs ~300 ms of CPU per check, on purpose, and Basic auth sends the
password with every request. So a credential that passed the hasher is remembered in the shared
cache for MUSEUM_AUTH_CACHE_SECONDS after its last use, bound to the account's password hash,
username and active flag; each worker keeps a copy of the entries it has read.

What a later request costs depends on the cache. With a shared one (REDIS_URL), the remembered
entry also keeps the account, valid while the account's version key in the cache is the one it
was kept with. Saving or deleting the account deletes that key (a signal, now and again after
the commit, as museum/response_cache.py does), so a password change, a deactivation or a deletion
takes effect on the next request on every node, for no query and no round trip of its own: the
version is read with the lockout's counters, in one `get_many`. An
update that sends no signal (QuerySet.update(), SQL by hand) is seen when the version key
expires, MUSEUM_AUTH_CACHE_SECONDS after it was made. Without a shared cache, each process's
cache is its own and a signal cannot reach the others: the account is loaded from the database
on every request, which sees every change at once. With a shared cache the account's permission
names are kept with it too, and KeptPermissionsBackend answers has_perm from them; a change to
the account's groups or permissions, or to a group's permissions, deletes the version keys of
the accounts concerned the same way. Without one, Django loads them for each request that asks.

The failed sign-in lockout comes first: a locked-out client gets the same 429 for a right
password as for a wrong one. While only the username is locked (guesses from everywhere), a
remembered credential still passes from the address where the hasher verified it, so the owner
keeps working and nobody else learns anything.
"""

import secrets
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import router
from django.db.models import Q
from django.utils.crypto import constant_time_compare, salted_hmac
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication, get_authorization_header

from museum.response_cache import now_and_on_commit
from museum.throttling import (
    client_address,
    one_password_check_at_a_time,
    record_failed_sign_in,
    sign_in_lockout,
)

# This process's copies of the shared cache's entries, in front of it: a request whose header
# this worker has seen reads only its account's version from the cache (or, without a shared
# cache, nothing). Safe to keep because the account's validity is checked on every request
# anyway; bounded, since each distinct header adds one.
remembered_here: dict[str, dict] = {}
REMEMBERED_HERE_MAX = 10_000


def _hmac(purpose: str, value: str | bytes) -> str:
    return salted_hmac(f"museum.authentication.{purpose}", value, algorithm="sha256").hexdigest()


def verified_credential_key(authorization: bytes) -> str:
    # An HMAC with SECRET_KEY, never the header: whoever reads the cache learns no password.
    return f"museum:verified-credential:{_hmac('credential', authorization)}"


def account_version_key(user_id) -> str:
    return f"museum:account-version:{user_id}"


def remember_verified_credential(*, authorization: bytes, user, address: str) -> None:
    remembered = {
        "user_id": user.pk,
        "password": _hmac("password", user.password),
        # Where the hasher verified it: the one place it still passes while its username is locked.
        "verified_at": _hmac("address", address),
    }
    # Without the account: the one ModelBackend loaded may predate a change whose signal has
    # already run. The next request keeps one loaded after reading the account's version.
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


def recall_verified_user(
    *,
    authorization: bytes,
    username: str,
    verified_at: str | None = None,
    read_already: dict | None = None,
):
    """The account this exact header was verified for, if it still may sign in with it (and,
    given `verified_at`, only if the hasher verified it from that address). `read_already` holds
    cache values this request has read (the account's version, see `version_to_read_along`)."""
    key = verified_credential_key(authorization)
    remembered = _recall(key)
    if remembered is None:
        return None
    if verified_at is not None and not constant_time_compare(
        _hmac("address", verified_at), remembered["verified_at"]
    ):
        return None
    user = _kept_account(remembered, read_already or {}) if settings.SHARED_CACHE else None
    if user is None:
        user = _load_account(key, remembered)
    if user is None or not user.is_active or user.get_username() != username:
        _forget(key)
        return None
    return user


def version_to_read_along(authorization: bytes) -> str | None:
    """The version key of the account this worker's copy of the header's entry keeps, if it
    keeps one: read with the failure counters, it costs no round trip of its own. Known
    without I/O, and only a guess: `_kept_account` reads the key itself if the entry it
    recalls is another."""
    if not settings.SHARED_CACHE:
        return None
    remembered = remembered_here.get(verified_credential_key(authorization))
    if remembered is None or "account" not in remembered:
        return None
    return account_version_key(remembered["user_id"])


def _kept_account(remembered: dict, read_already: dict):
    """The account kept in the entry, if it has not changed since (else None)."""
    kept = remembered.get("account")
    if kept is None:
        return None
    key = account_version_key(remembered["user_id"])
    version = read_already[key] if key in read_already else cache.get(key)
    if version is None or version != kept["version"]:
        return None
    user_model = get_user_model()
    # As a query deferring the password would load it: the hash never sits in the cache, and a
    # save() of this instance writes only the fields it holds.
    user = user_model.from_db(
        router.db_for_read(user_model), list(kept["fields"]), list(kept["fields"].values())
    )
    if "permissions" in kept:  # else KeptPermissionsBackend loads them, as ModelBackend does
        # An attribute of ours, which the user model does not declare.
        user.kept_permissions = KeptPermissions(  # type: ignore[attr-defined]
            user=frozenset(kept["permissions"]["user"]),
            group=frozenset(kept["permissions"]["group"]),
        )
    return user


def _load_account(key: str, remembered: dict):
    """The account from the database, if the remembered credential is still its password (else
    None); with a shared cache, kept in the entry for the next requests."""
    version = _account_version(remembered["user_id"]) if settings.SHARED_CACHE else None
    user = get_user_model()._default_manager.filter(pk=remembered["user_id"]).first()
    if user is None or not constant_time_compare(
        _hmac("password", user.password), remembered["password"]
    ):
        return None
    if version is not None:
        account = {"version": version, "fields": _fields(user), "permissions": _permissions(user)}
        _store(key, {**remembered, "account": account})
    return user


def _account_version(user_id) -> str | None:
    """The account's current version, made if it has none. Read before the account is: a change
    committed after the read deletes it, so an account kept with it is never used."""
    key = account_version_key(user_id)
    version = cache.get(key)
    if version is None:
        version = secrets.token_hex(16)
        if not cache.add(key, version, timeout=settings.MUSEUM_AUTH_CACHE_SECONDS):
            # Another request made one meanwhile (None if a change deleted it again since).
            version = cache.get(key)
    return version


def _fields(user) -> dict:
    """The account's column values but its password hash, by attribute name."""
    return {
        field.attname: getattr(user, field.attname)
        for field in type(user)._meta.get_fields()
        if field.concrete and not field.many_to_many and field.name != "password"
    }


def _permissions(user) -> dict:
    """The account's permission names, its own and its groups', as ModelBackend finds them."""
    backend = KeptPermissionsBackend()
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
    """ModelBackend, answering from the permissions kept with the account when the account came
    from the cache (`user.kept_permissions`): a request asking `has_perm` then needs no query.

    They are exactly as fresh as the kept account: a change to the account's groups or
    permissions, or to its groups' permissions, deletes the account's version key as a change
    to the account does (`forget_accounts_on_permission_change`).
    """

    def get_user_permissions(self, user_obj, obj=None):
        kept = _kept_permissions(user_obj, obj)
        if kept is None:
            return super().get_user_permissions(user_obj, obj=obj)
        return set(kept.user)

    def get_group_permissions(self, user_obj, obj=None):
        kept = _kept_permissions(user_obj, obj)
        if kept is None:
            return super().get_group_permissions(user_obj, obj=obj)
        return set(kept.group)


def _kept_permissions(user_obj, obj) -> KeptPermissions | None:
    """The permissions kept with a cached account, where they answer: an active account's model
    permissions (object permissions and inactive accounts go to ModelBackend as ever)."""
    if obj is not None or not user_obj.is_active:
        return None
    return getattr(user_obj, "kept_permissions", None)


def forget_accounts_on_change(sender, instance, **kwargs) -> None:
    """post_save and post_delete of the user model: the account kept with its remembered
    credentials is stale, on every node sharing the cache."""
    _forget_account_versions([instance.pk])


def forget_accounts_on_permission_change(sender, instance, action, reverse, pk_set, **kwargs):
    """m2m_changed of an account's groups or own permissions, and of a group's permissions: the
    permissions kept with the accounts concerned are stale."""
    user_model = get_user_model()
    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    # pre_clear: pk_set is None, so the accounts are those still linked before the clear.
    if sender is Group.permissions.through:
        groups = [instance.pk] if not reverse else pk_set
        if groups is None:  # a permission's groups, cleared
            groups = list(instance.group_set.values_list("pk", flat=True))
        users = user_model._default_manager.filter(groups__in=groups)
    elif not reverse:  # the account's groups or permissions
        users = user_model._default_manager.filter(pk=instance.pk)
    elif pk_set is not None:  # added to or removed from a group's members or a permission's
        users = user_model._default_manager.filter(pk__in=pk_set)
    elif sender is user_model.groups.through:  # a group's members, cleared
        users = user_model._default_manager.filter(groups=instance)
    else:  # a permission's accounts, cleared
        users = user_model._default_manager.filter(user_permissions=instance)
    _forget_accounts(users)


def forget_accounts_on_group_delete(sender, instance, **kwargs) -> None:
    """pre_delete of a group: its members lose its permissions (the deletion sends no
    m2m_changed), so the permissions kept with them are stale."""
    _forget_accounts(get_user_model()._default_manager.filter(groups=instance))


def forget_accounts_on_permission_save_or_delete(sender, instance, **kwargs) -> None:
    """post_save and pre_delete of a permission: its name, as kept, may be new or gone for the
    accounts holding it, their own or through a group, and for superusers, who hold them all."""
    users = get_user_model()._default_manager.filter(
        Q(user_permissions=instance) | Q(groups__permissions=instance) | Q(is_superuser=True)
    )
    _forget_accounts(users)


def _forget_accounts(users) -> None:
    _forget_account_versions(users.values_list("pk", flat=True).distinct())


def _forget_account_versions(user_ids) -> None:
    """Delete the accounts' version keys, at once and again on commit (a request between the
    two could keep the account as it was before the transaction)."""
    keys = [account_version_key(pk) for pk in user_ids]
    if not keys:
        return

    def forget() -> None:
        cache.delete_many(keys)

    now_and_on_commit(forget)


def _forget(key: str) -> None:
    remembered_here.pop(key, None)
    cache.delete(key)


def _remember_here(key: str, remembered: dict) -> None:
    if len(remembered_here) >= REMEMBERED_HERE_MAX:
        # Start over rather than pick entries to drop: safe while other threads read and write,
        # and each entry comes back from the shared cache on its client's next request.
        remembered_here.clear()
    remembered_here[key] = remembered


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
        version_key = version_to_read_along(authorization)
        lockout, read = sign_in_lockout(
            username=userid, address=address, read_along=[version_key] if version_key else []
        )
        if lockout is not None:
            return self._during_lockout(lockout, authorization, userid, address, read)
        user = recall_verified_user(authorization=authorization, username=userid, read_already=read)
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
    def _during_lockout(lockout, authorization: bytes, username: str, address: str, read: dict):
        if not lockout.locks_address:
            # Only the username is locked: its owner keeps working from where it signed in.
            user = recall_verified_user(
                authorization=authorization,
                username=username,
                verified_at=address,
                read_already=read,
            )
            if user is not None:
                return (user, None)
            # Counted, so that a guesser sharing the owner's address gets no more tries at
            # telling 429 from 200 than it would get at telling 401 from 200.
            record_failed_sign_in(username=username, address=address)
        raise lockout.refusal()
