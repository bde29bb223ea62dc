"""A verified Basic credential is remembered briefly, and never outlives what made it valid."""

import base64

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import Permission
from django.core.cache import cache
from rest_framework.test import APIClient

from museum import authentication
from museum.accounts import door_group
from tests.conftest import basic_auth, counting_hashes
from tests.factories import PASSWORD, partner_member

HOURS = "/v1.1/museum-hours"
CHECK_IN = "/v1.1/tickets/check-in"
START = 1_800_000_000  # a fixed moment, moved by the tests that are about time


@pytest.fixture
def cache_writes(monkeypatch):
    """Every cache.set as (key, value, timeout); the writes still happen."""
    writes = []
    original_set = cache.set

    def recording_set(key, value, timeout=None, **kwargs):
        writes.append((key, value, timeout))
        return original_set(key, value, timeout, **kwargs)

    monkeypatch.setattr(cache, "set", recording_set)
    return writes


@pytest.fixture(params=["own cache", "shared cache"])
def either_cache(request, settings):
    """Each test twice: with each process's own cache (the account loaded on every request),
    and with a cache every worker shares (REDIS_URL: the account kept with the credential).
    A test is one process, so its own cache is the one every request sees."""
    settings.SHARED_CACHE = request.param == "shared cache"


@pytest.fixture
def shared_cache(settings):
    settings.SHARED_CACHE = True


def remembered_credentials(writes):
    return [write for write in writes if write[0].startswith("museum:verified-credential:")]


def signed_in_client(username="visitor", password=PASSWORD) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=basic_auth(username, password))
    return client


def remembered_client(username="visitor") -> APIClient:
    """A client whose credential is remembered, and (with a shared cache) its account kept."""
    client = signed_in_client(username)
    for _ in range(2):  # the hasher, then the account loaded and kept
        assert client.get(HOURS).status_code == 200
    return client


def test_a_second_request_with_the_same_credentials_skips_the_hasher(visitor):
    client = signed_in_client()

    with counting_hashes() as hashes:
        assert client.get(HOURS).status_code == 200
        assert hashes.count == 1
        assert client.get(HOURS).status_code == 200
        assert client.get(HOURS).status_code == 200

    assert hashes.count == 1


def test_without_a_shared_cache_a_remembered_credential_costs_one_query_for_the_account(
    visitor, django_assert_num_queries
):
    client = signed_in_client()
    client.get(HOURS)

    # The signing key needs nothing from the database: the one query is the account's.
    with django_assert_num_queries(1):
        assert client.get("/v1.1/tickets/signing-key").status_code == 200


def test_with_a_shared_cache_a_remembered_credential_costs_no_query(
    visitor, shared_cache, django_assert_num_queries
):
    client = signed_in_client()
    client.get(HOURS)  # the hasher
    client.get(HOURS)  # the account, loaded once and kept with the credential

    with django_assert_num_queries(0):
        assert client.get("/v1.1/tickets/signing-key").status_code == 200
        assert client.get("/v1.1/tickets/signing-key").status_code == 200


@pytest.fixture
def cache_reads(monkeypatch):
    """The keys of each cache.get and cache.get_many the code makes (not those the cache
    backend makes inside them); the reads still happen."""
    reads = []
    inside = []

    def recording(original):
        def read(keys, *args, **kwargs):
            if not inside:
                reads.append([keys] if isinstance(keys, str) else list(keys))
            inside.append(True)
            try:
                return original(keys, *args, **kwargs)
            finally:
                inside.pop()

        return read

    monkeypatch.setattr(cache, "get", recording(cache.get))
    monkeypatch.setattr(cache, "get_many", recording(cache.get_many))
    return reads


def test_the_lockout_the_remembered_credential_and_the_version_are_one_cache_read(
    visitor, shared_cache, cache_reads
):
    client = remembered_client()
    cache_reads.clear()

    assert client.get("/v1.1/tickets/signing-key").status_code == 200

    # (The request rate's count reads too on this test's cache; on Redis it is one script.)
    [read] = [keys for keys in cache_reads if any(key.startswith("museum:") for key in keys)]
    assert authentication.verified_credential_key(basic_auth("visitor").encode()) in read
    assert authentication.KEPT_ACCOUNTS_VERSION_KEY in read
    assert sum(key.startswith("museum:auth-failures:") for key in read) == 3


def test_a_version_read_with_the_lockout_still_sees_a_change(visitor, shared_cache):
    client = remembered_client()

    visitor.is_active = False
    visitor.save()

    assert client.get("/v1.1/tickets/signing-key").status_code == 401


def test_a_version_made_elsewhere_still_lets_this_worker_keep_the_account(
    visitor, shared_cache, django_assert_num_queries
):
    client = signed_in_client()
    client.get(HOURS)  # the hasher
    # Another worker (or an earlier run of this one) already made the kept accounts' version.
    cache.set(authentication.KEPT_ACCOUNTS_VERSION_KEY, "made-elsewhere")
    client.get(HOURS)  # the account, loaded once and kept under that version

    with django_assert_num_queries(0):
        assert client.get("/v1.1/tickets/signing-key").status_code == 200


def test_the_kept_account_is_the_account_without_its_password_hash(visitor, shared_cache):
    client = signed_in_client()
    client.get(HOURS)
    client.get(HOURS)
    key = authentication.verified_credential_key(basic_auth("visitor").encode())
    remembered = cache.get(key)

    kept = authentication.recall_verified_user(key=key, username="visitor")

    assert "password" not in remembered["account"]["fields"]
    assert (kept.pk, kept.username, kept.email, kept.date_joined) == (
        visitor.pk,
        visitor.username,
        visitor.email,
        visitor.date_joined,
    )
    assert kept.get_deferred_fields() == {"password"}
    # Saving it writes the fields it holds and leaves the password as it is.
    kept.first_name = "Ada"
    kept.save()
    visitor.refresh_from_db()
    assert visitor.first_name == "Ada" and visitor.check_password(PASSWORD)


def test_a_changed_password_refuses_the_old_one_on_the_next_request(visitor, either_cache):
    client = remembered_client()

    visitor.set_password("a brand new passphrase")
    visitor.save()

    assert client.get(HOURS).status_code == 401
    assert signed_in_client(password="a brand new passphrase").get(HOURS).status_code == 200


def test_a_deactivated_account_is_refused_on_the_next_request(visitor, either_cache):
    client = remembered_client()

    visitor.is_active = False
    visitor.save()

    assert client.get(HOURS).status_code == 401


def test_a_deleted_account_is_refused_on_the_next_request(visitor, either_cache):
    client = remembered_client()

    visitor.delete()

    assert client.get(HOURS).status_code == 401


def test_a_renamed_account_no_longer_answers_to_its_old_name(visitor, either_cache):
    client = remembered_client()

    visitor.username = "ada"
    visitor.save()

    assert client.get(HOURS).status_code == 401


def test_a_deleted_account_recreated_with_the_same_name_and_password_signs_in(
    visitor, either_cache
):
    client = remembered_client()

    visitor.delete()
    partner_member(username="visitor")

    assert client.get(HOURS).status_code == 200


def test_a_member_removed_from_a_group_loses_its_rights_on_the_next_request(
    door_staff, either_cache
):
    client = remembered_client("door")
    # Past the permission, refused for the missing scan: a 400.
    assert client.post(CHECK_IN, {}, format="json").status_code == 400

    door_staff.groups.clear()

    assert client.post(CHECK_IN, {}, format="json").status_code == 403


def check_in_permission() -> Permission:
    return Permission.objects.get(content_type__app_label="orders", codename="check_in_ticket")


def test_a_member_removed_from_a_group_s_members_loses_its_rights_on_the_next_request(
    door_staff, either_cache
):
    client = remembered_client("door")
    assert client.post(CHECK_IN, {}, format="json").status_code == 400

    door_group().user_set.remove(door_staff)

    assert client.post(CHECK_IN, {}, format="json").status_code == 403


def test_a_permission_removed_from_a_group_is_lost_on_the_next_request(door_staff, either_cache):
    client = remembered_client("door")
    assert client.post(CHECK_IN, {}, format="json").status_code == 400

    door_group().permissions.remove(check_in_permission())

    assert client.post(CHECK_IN, {}, format="json").status_code == 403


def test_a_permission_whose_groups_are_cleared_is_lost_on_the_next_request(
    door_staff, either_cache
):
    client = remembered_client("door")
    assert client.post(CHECK_IN, {}, format="json").status_code == 400

    check_in_permission().group_set.clear()

    assert client.post(CHECK_IN, {}, format="json").status_code == 403


def test_a_deleted_group_s_rights_are_lost_on_the_next_request(door_staff, either_cache):
    client = remembered_client("door")
    assert client.post(CHECK_IN, {}, format="json").status_code == 400

    door_group().delete()

    assert client.post(CHECK_IN, {}, format="json").status_code == 403


def test_an_account_s_own_permission_is_gained_and_lost_on_the_next_request(visitor, either_cache):
    client = remembered_client()
    assert client.post(CHECK_IN, {}, format="json").status_code == 403

    visitor.user_permissions.add(check_in_permission())
    assert client.post(CHECK_IN, {}, format="json").status_code == 400

    visitor.user_permissions.remove(check_in_permission())
    assert client.post(CHECK_IN, {}, format="json").status_code == 403


def test_a_permission_taken_from_its_accounts_is_lost_on_the_next_request(visitor, either_cache):
    visitor.user_permissions.add(check_in_permission())
    client = remembered_client()
    assert client.post(CHECK_IN, {}, format="json").status_code == 400

    check_in_permission().user_set.clear()

    assert client.post(CHECK_IN, {}, format="json").status_code == 403


def test_with_a_shared_cache_the_door_s_permission_check_costs_no_query(
    door_staff, shared_cache, django_assert_num_queries
):
    client = remembered_client("door")

    # Refused for the missing scan, after the permission: nothing else needs the database.
    with django_assert_num_queries(0):
        assert client.post(CHECK_IN, {}, format="json").status_code == 400


def test_a_change_is_seen_again_when_it_commits(
    visitor, shared_cache, django_capture_on_commit_callbacks
):
    # Between the save and its commit, another connection reads the account as it was and may
    # keep it under a fresh version; the commit's deletion makes that version stale.
    client = remembered_client()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        visitor.is_active = False
        visitor.save()
    version = authentication.KEPT_ACCOUNTS_VERSION_KEY
    cache.set(version, "taken before the commit")
    key = authentication.verified_credential_key(basic_auth("visitor").encode())
    entry = cache.get(key)
    entry["account"]["version"] = "taken before the commit"
    cache.set(key, entry)

    for callback in callbacks:
        callback()

    assert cache.get(version) is None
    assert client.get(HOURS).status_code == 401


def test_a_wrong_password_is_checked_by_the_hasher_every_time(visitor, cache_writes):
    client = signed_in_client(password="not the password")

    with counting_hashes() as hashes:
        for _ in range(3):
            assert client.get(HOURS).status_code == 401

    assert hashes.count == 3
    assert remembered_credentials(cache_writes) == []


def test_an_unknown_username_costs_a_hash_every_time(db):
    client = signed_in_client(username="nobody")

    with counting_hashes() as hashes:
        for _ in range(2):
            assert client.get(HOURS).status_code == 401

    assert hashes.count == 2


def test_the_cache_holds_neither_the_password_nor_the_header(visitor, cache_writes):
    header = basic_auth("visitor")
    encoded_credentials = header.removeprefix("Basic ")

    assert signed_in_client().get(HOURS).status_code == 200

    [(key, value, _)] = remembered_credentials(cache_writes)
    stored = key + repr(value)
    assert PASSWORD not in stored
    assert encoded_credentials not in stored
    assert base64.b64decode(encoded_credentials).decode() not in stored
    # Not even the password hash, which could be attacked offline.
    assert visitor.password not in stored
    assert value["user_id"] == visitor.pk


def test_a_verified_credential_is_remembered_for_the_configured_time(
    visitor, cache_writes, settings
):
    settings.MUSEUM_AUTH_CACHE_SECONDS = 42

    signed_in_client().get(HOURS)

    [(_, _, timeout)] = remembered_credentials(cache_writes)
    assert timeout == 42


def test_once_the_remembered_credential_expires_the_hasher_runs_again(
    visitor, settings, time_machine
):
    settings.MUSEUM_AUTH_CACHE_SECONDS = 60
    time_machine.move_to(START, tick=False)
    client = signed_in_client()
    client.get(HOURS)

    time_machine.move_to(START + 60, tick=False)

    with counting_hashes() as hashes:
        assert client.get(HOURS).status_code == 200
    assert hashes.count == 1


def test_a_credential_in_use_is_kept_fresh_and_never_expires(visitor, settings, time_machine):
    settings.MUSEUM_AUTH_CACHE_SECONDS = 60
    time_machine.move_to(START, tick=False)
    client = signed_in_client()
    client.get(HOURS)

    with counting_hashes() as hashes:
        for seconds in range(25, 600, 25):  # used at least once per half its lifetime
            time_machine.move_to(START + seconds, tick=False)
            assert client.get(HOURS).status_code == 200
    assert hashes.count == 0


def test_zero_seconds_turns_the_memory_off(visitor, settings):
    settings.MUSEUM_AUTH_CACHE_SECONDS = 0
    client = signed_in_client()

    with counting_hashes() as hashes:
        assert client.get(HOURS).status_code == 200
        assert client.get(HOURS).status_code == 200

    assert hashes.count == 2


def test_a_nul_byte_in_the_credentials_is_a_plain_401(visitor):
    with counting_hashes() as hashes:
        response = signed_in_client(username="vis\x00itor").get(HOURS)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Basic realm="museum"'
    assert hashes.count == 0


def test_with_the_production_hasher_the_cost_is_paid_once(visitor, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    visitor.set_password(PASSWORD)
    visitor.save()
    client = signed_in_client()

    with counting_hashes(PBKDF2PasswordHasher) as hashes:
        for _ in range(3):
            assert client.get(HOURS).status_code == 200

    assert hashes.count == 1
