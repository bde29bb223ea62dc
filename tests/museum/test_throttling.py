"""Failed sign-ins are limited before the hasher runs; requests are limited per account/address."""

import logging

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from museum import authentication, throttling
from tests.conftest import basic_auth, counting_hashes
from tests.factories import PASSWORD, UserFactory

HOURS = "/v1.1/museum-hours"
SCHEMA = "/v1.1/openapi.json"  # readable without an account
PROBLEM = "application/problem+json"
WINDOW = 300
# Ten seconds into a failure window, so that Retry-After is known exactly.
START = 1_000_000 * WINDOW + 10


LIMITS = [
    "MUSEUM_AUTH_FAILURES_PER_USERNAME_AND_ADDRESS",
    "MUSEUM_AUTH_FAILURES_PER_USERNAME",
    "MUSEUM_AUTH_FAILURES_PER_ADDRESS",
]


@pytest.fixture(autouse=True)
def failure_limits(settings, time_machine):
    settings.MUSEUM_AUTH_FAILURE_WINDOW_SECONDS = WINDOW
    settings.MUSEUM_AUTH_FAILURES_PER_USERNAME_AND_ADDRESS = 3
    settings.MUSEUM_AUTH_FAILURES_PER_USERNAME = 8
    settings.MUSEUM_AUTH_FAILURES_PER_ADDRESS = 5
    time_machine.move_to(START, tick=False)


def sign_in(username="visitor", password=PASSWORD, address="10.0.0.1", **headers):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=basic_auth(username, password))
    return client.get(HOURS, REMOTE_ADDR=address, **headers)


def fail_to_sign_in(times, username="visitor", address="10.0.0.1", **headers):
    for _ in range(times):
        response = sign_in(username, "wrong password", address, **headers)
        assert response.status_code == 401


def assert_too_many_requests(response):
    assert response.status_code == 429
    assert response["Content-Type"] == PROBLEM
    assert response.json()["status"] == 429
    assert int(response["Retry-After"]) > 0
    return response.json()


def test_after_the_allowed_failures_the_next_attempt_is_429_without_hashing(visitor):
    fail_to_sign_in(3)

    with counting_hashes() as hashes:
        wrong = sign_in(password="wrong password")
        right = sign_in()

    assert assert_too_many_requests(wrong)["code"] == "too_many_failed_sign_ins"
    assert wrong["Retry-After"] == str(WINDOW - 10)
    # Even the right password waits: checking it would cost the hasher's work.
    assert_too_many_requests(right)
    assert hashes.count == 0


def test_the_username_and_address_limit_leaves_other_usernames_and_addresses_alone(visitor):
    UserFactory(username="ada")
    fail_to_sign_in(3, username="visitor", address="10.0.0.1")

    assert sign_in("ada", address="10.0.0.1").status_code == 200
    assert sign_in("ada", "wrong password", address="10.0.0.1").status_code == 401
    assert_too_many_requests(sign_in("visitor", address="10.0.0.1"))
    assert sign_in("visitor", address="10.0.0.2").status_code == 200


def test_a_strangers_wrong_passwords_leave_the_owner_free_elsewhere(visitor, settings):
    from museum import settings as shipped

    for name in LIMITS:
        setattr(settings, name, getattr(shipped, name))
    fail_to_sign_in(10, address="10.6.6.6")
    assert_too_many_requests(sign_in(address="10.6.6.6"))

    assert sign_in(address="10.0.0.1").status_code == 200


def without_request_id(answer) -> dict:
    """A problem's body but for the id of its request, each request's own."""
    return {key: value for key, value in answer.json().items() if key != "requestId"}


def test_a_locked_out_address_gets_the_same_429_for_the_right_password(visitor):
    # The owner signed in from the guesser's address a moment ago: its credential is remembered.
    assert sign_in(address="10.0.0.1").status_code == 200
    assert sign_in(address="10.0.0.2").status_code == 200
    fail_to_sign_in(3, address="10.0.0.1")

    wrong = sign_in(password="wrong password", address="10.0.0.1")
    right = sign_in(address="10.0.0.1")

    assert_too_many_requests(wrong)

    assert (right.status_code, without_request_id(right), right["Retry-After"]) == (
        wrong.status_code,
        without_request_id(wrong),
        wrong["Retry-After"],
    )
    # The owner elsewhere keeps working.
    assert sign_in(address="10.0.0.2").status_code == 200


def spread_failures(times, username="visitor"):
    """Wrong passwords from as many addresses, each below its own limits."""
    for number in range(times):
        fail_to_sign_in(1, username=username, address=f"192.0.2.{number}")


def test_guesses_from_everywhere_lock_the_username_at_its_higher_ceiling(visitor):
    spread_failures(7)
    assert sign_in(address="10.0.0.9").status_code == 200

    spread_failures(1)

    assert_too_many_requests(sign_in(address="10.0.0.10"))


def test_while_the_username_is_locked_a_remembered_credential_passes_only_where_it_was_verified(
    visitor,
):
    assert sign_in(address="10.0.0.1").status_code == 200  # the owner, verified from 10.0.0.1
    spread_failures(8)

    with counting_hashes() as hashes:
        assert sign_in(address="10.0.0.1").status_code == 200
        # The same header elsewhere is a guess like any other.
        elsewhere = sign_in(address="10.0.0.2")
        wrong = sign_in(password="wrong password", address="10.0.0.2")
    assert hashes.count == 0
    assert_too_many_requests(elsewhere)
    assert without_request_id(elsewhere) == without_request_id(wrong)


def test_refusals_while_the_username_is_locked_count_against_the_address(visitor):
    assert sign_in(address="10.0.0.1").status_code == 200
    spread_failures(8)

    # A guesser sharing the owner's address: each refused guess counts as a failure from there.
    for _ in range(3):
        assert_too_many_requests(sign_in(password="a guess", address="10.0.0.1"))

    assert_too_many_requests(sign_in(address="10.0.0.1"))


def test_the_address_limit_counts_every_username_from_that_address(visitor):
    for username in ["a", "b", "c", "d", "e"]:
        fail_to_sign_in(1, username=username, address="10.0.0.1")

    with counting_hashes() as hashes:
        assert_too_many_requests(sign_in("f", "wrong password", address="10.0.0.1"))
        assert_too_many_requests(sign_in("visitor", address="10.0.0.1"))
    assert hashes.count == 0
    assert sign_in("visitor", address="10.0.0.2").status_code == 200


def test_a_forged_x_forwarded_for_does_not_escape_the_address_limit(visitor):
    for number in range(5):
        fail_to_sign_in(1, username=f"u{number}", HTTP_X_FORWARDED_FOR=f"192.0.2.{number}")

    response = sign_in("u9", "wrong", HTTP_X_FORWARDED_FOR="192.0.2.99")

    assert_too_many_requests(response)


def test_behind_a_proxy_the_address_is_the_one_the_proxy_saw(visitor, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    for number in range(5):
        fail_to_sign_in(1, username=f"u{number}", address="10.9.9.9", HTTP_X_FORWARDED_FOR="a, b")

    # The proxy appends the address it saw; what comes before it is the client's to forge.
    assert_too_many_requests(sign_in(address="10.9.9.9", HTTP_X_FORWARDED_FOR="c, b"))
    assert sign_in(address="10.9.9.9", HTTP_X_FORWARDED_FOR="a, c").status_code == 200


def test_successful_sign_ins_do_not_count(visitor, settings):
    settings.MUSEUM_AUTH_CACHE_SECONDS = 0  # every success goes through the hasher
    fail_to_sign_in(2)
    for _ in range(5):
        assert sign_in().status_code == 200

    fail_to_sign_in(1)
    assert_too_many_requests(sign_in())


def test_the_lockout_ends_with_its_window(visitor, time_machine):
    fail_to_sign_in(3)
    assert_too_many_requests(sign_in())

    time_machine.move_to(START + WINDOW - 10, tick=False)

    assert sign_in().status_code == 200


def test_a_lockout_is_logged_once_without_the_password(visitor, caplog):
    caplog.set_level(logging.WARNING, logger="museum.security")
    fail_to_sign_in(3)
    for _ in range(3):
        assert_too_many_requests(sign_in(password="wrong password"))

    [record] = [r for r in caplog.records if r.name == "museum.security"]
    message = record.getMessage()
    assert "username and address 'visitor' from 10.0.0.1" in message
    assert "wrong password" not in message
    assert basic_auth("visitor", "wrong password").removeprefix("Basic ") not in message


def test_an_address_lockout_is_logged(db, caplog):
    caplog.set_level(logging.WARNING, logger="museum.security")
    for username in ["a", "b", "c", "d", "e"]:
        fail_to_sign_in(1, username=username)

    [record] = [r for r in caplog.records if r.name == "museum.security"]
    assert "for address '10.0.0.1'" in record.getMessage()


@pytest.fixture
def tiny_rates(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "2/min", "anon": "2/min"},
    }


def test_an_account_over_its_rate_gets_429_with_rate_limit_headers(visitor, tiny_rates):
    UserFactory(username="ada")
    first, second, third = (sign_in() for _ in range(3))

    assert first.status_code == second.status_code == 200
    assert first["RateLimit-Limit"] == "2"
    assert [first["RateLimit-Remaining"], second["RateLimit-Remaining"]] == ["1", "0"]
    assert 0 < int(second["RateLimit-Reset"]) <= 60
    assert assert_too_many_requests(third)["code"] == "throttled"
    assert third["RateLimit-Remaining"] == "0"
    # Per account, whatever the address.
    assert sign_in(address="10.0.0.2").status_code == 429
    assert sign_in("ada").status_code == 200


def test_an_address_without_an_account_over_its_rate_gets_429(db, tiny_rates):
    client = APIClient()
    first, second, third = (client.get(SCHEMA, REMOTE_ADDR="10.0.0.1") for _ in range(3))

    assert first.status_code == second.status_code == 200
    assert [first["RateLimit-Remaining"], second["RateLimit-Remaining"]] == ["1", "0"]
    assert_too_many_requests(third)
    assert third["RateLimit-Limit"] == "2"
    assert client.get(SCHEMA, REMOTE_ADDR="10.0.0.2").status_code == 200


def test_the_default_rates_leave_room_for_normal_use(visitor):
    response = sign_in()

    assert response["RateLimit-Limit"] == "600"
    assert response["RateLimit-Remaining"] == "599"


def account_counter(user) -> str:
    return throttling.AccountRateThrottle.key_for(user.get_username())


def test_every_request_is_counted_and_the_remaining_count_is_exact(visitor):
    answers = [sign_in() for _ in range(7)]

    assert [answer["RateLimit-Remaining"] for answer in answers] == [str(599 - n) for n in range(7)]
    assert cache.get(account_counter(visitor)) == 7


def test_a_strangers_wrong_passwords_never_count_on_the_account_s_rate(visitor):
    assert sign_in().status_code == 200
    fail_to_sign_in(3, address="10.0.0.9")

    assert cache.get(account_counter(visitor)) == 1
    assert sign_in()["RateLimit-Remaining"] == "598"


def test_requests_counted_elsewhere_show_in_the_remaining_count(visitor):
    # Another worker or node counted 100 of this account's requests in the same window.
    assert sign_in().status_code == 200
    cache.incr(account_counter(visitor), 100)

    assert sign_in()["RateLimit-Remaining"] == str(600 - 102)


def test_the_limit_is_exact_however_requests_interleave(visitor, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "300/min", "anon": "300/min"},
    }
    assert sign_in().status_code == 200
    cache.incr(account_counter(visitor), 298)  # counted by other workers

    assert [sign_in().status_code for _ in range(2)] == [200, 429]


def checking(header: str, address="10.0.0.1"):
    """A password check of `header` under way from `address`, as another worker runs it."""
    credential = authentication.verified_credential_key(header.encode())
    return throttling.one_password_check_at_a_time(address=address, credential=credential)


def test_while_a_password_check_runs_another_from_that_address_is_429_without_hashing(visitor):
    with checking(basic_auth("visitor", "a guess")), counting_hashes() as hashes:
        response = sign_in(address="10.0.0.1")
        elsewhere = sign_in(address="10.0.0.2")

    assert assert_too_many_requests(response)["code"] == "sign_in_in_progress"
    assert elsewhere.status_code == 200
    assert hashes.count == 1  # only the other address's check
    assert sign_in(address="10.0.0.1").status_code == 200  # the slot is free again


def test_a_request_waits_for_the_check_of_its_own_credential_and_uses_its_result(
    visitor, monkeypatch
):
    other_worker = checking(basic_auth("visitor"))
    other_worker.__enter__()

    def other_worker_finishes(seconds):
        # What the other worker's request does when its hash is done.
        authentication.remember_verified_credential(
            authorization=basic_auth("visitor").encode(), user=visitor, address="10.0.0.1"
        )
        other_worker.__exit__(None, None, None)

    monkeypatch.setattr(throttling.time, "sleep", other_worker_finishes)
    with counting_hashes() as hashes:
        response = sign_in(address="10.0.0.1")

    assert response.status_code == 200
    assert hashes.count == 0


def test_a_remembered_credential_needs_no_checking_slot(visitor):
    assert sign_in().status_code == 200

    with checking(basic_auth("visitor", "a guess")):
        assert sign_in().status_code == 200
