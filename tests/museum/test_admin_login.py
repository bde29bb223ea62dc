"""The admin login (the door page's too) locks a username out from an address (django-axes)."""

from io import StringIO

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.test import Client

from tests.conftest import basic_auth, counting_hashes
from tests.factories import PASSWORD, UserFactory

LOGIN = "/admin/login/?next=/door/"


@pytest.fixture
def admin_limits(settings):
    settings.AXES_FAILURE_LIMIT = 3


def sign_in(username="staff", password=PASSWORD, address="10.0.0.1"):
    return Client(REMOTE_ADDR=address).post(LOGIN, {"username": username, "password": password})


def fail_to_sign_in(times, username="staff", address="10.0.0.1"):
    """Wrong passwords up to the limit: the form again with its error, and 429 at the limit."""
    for number in range(1, times + 1):
        response = sign_in(username, "wrong password", address)
        if number < 3:
            assert response.status_code == 200
            assert b"Please enter the correct username and password" in response.content
        else:
            assert response.status_code == 429


def test_the_right_password_signs_in_to_the_door(staff, admin_limits):
    response = sign_in()

    assert response.status_code == 302 and response["Location"] == "/door/"


def test_after_the_allowed_failures_even_the_right_password_is_refused_unchecked(
    staff, admin_limits
):
    fail_to_sign_in(3)

    with counting_hashes() as hashes:
        right = sign_in()
        wrong = sign_in(password="another guess")

    assert right.status_code == wrong.status_code == 429
    assert right.content == wrong.content
    assert hashes.count == 0


def test_the_lockout_is_for_that_username_from_that_address(staff, admin_limits):
    other = UserFactory(username="other", is_staff=True)
    other.set_password("other's password")
    other.save()
    fail_to_sign_in(3)

    assert sign_in(address="10.0.0.2").status_code == 302
    assert sign_in("other", "other's password", address="10.0.0.1").status_code == 302


def test_the_lockout_ends_after_the_cooloff(staff, admin_limits, settings, time_machine):
    time_machine.move_to("2030-01-01 10:00Z", tick=False)
    fail_to_sign_in(3)
    assert sign_in().status_code == 429

    time_machine.move_to("2030-01-01 10:16Z", tick=False)

    assert sign_in().status_code == 302


def test_administrators_see_the_lockout_in_the_admin(staff, admin_limits, client):
    fail_to_sign_in(3)
    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))

    page = client.get("/admin/axes/accessattempt/")

    assert page.status_code == 200
    assert b"10.0.0.1" in page.content and b"staff" in page.content


def test_axes_reset_unlocks(staff, admin_limits):
    fail_to_sign_in(3)

    call_command("axes_reset_username", "staff", stdout=StringIO())

    assert sign_in().status_code == 302


def test_api_sign_ins_are_neither_recorded_nor_refused_by_the_admin_lockout(staff, admin_limits):
    api = Client(REMOTE_ADDR="10.0.0.1")
    for _ in range(4):
        wrong = api.get("/v1.1/museum-hours", HTTP_AUTHORIZATION=basic_auth("staff", "nope"))
        assert wrong.status_code == 401
    assert not AccessAttempt.objects.exists()

    fail_to_sign_in(3)

    right = api.get("/v1.1/museum-hours", HTTP_AUTHORIZATION=basic_auth("staff"))
    assert right.status_code == 200


# The API's limits, on the API's counters (museum/admin_sign_in.py): a few guesses for each of
# many usernames from one address, or for one username from many addresses.


def test_one_address_trying_many_usernames_is_locked_out_at_the_apis_limit(staff, settings):
    assert settings.MUSEUM_AUTH_FAILURES_PER_ADDRESS == 30
    answers = [
        sign_in(f"user{number}", "wrong password", address="10.0.0.9").status_code
        for number in range(8)
        for _ in range(4)  # under the limit per username from one address (5)
    ]

    assert answers == [200] * 30 + [429] * 2
    with counting_hashes() as hashes:
        assert sign_in(address="10.0.0.9").status_code == 429
    assert hashes.count == 0
    assert sign_in(address="10.0.0.10").status_code == 302


def test_one_username_tried_from_many_addresses_is_locked_out_everywhere(staff, settings):
    assert settings.MUSEUM_AUTH_FAILURES_PER_USERNAME == 100
    for address in range(25):
        for _ in range(4):
            assert sign_in(password="wrong", address=f"10.1.0.{address}").status_code == 200
    other = UserFactory(username="other", is_staff=True)

    with counting_hashes() as hashes:
        assert sign_in(address="10.2.0.1").status_code == 429
    assert hashes.count == 0
    assert (
        Client(REMOTE_ADDR="10.2.0.1")
        .post(LOGIN, {"username": other.username, "password": PASSWORD})
        .status_code
        == 302
    )


def test_the_api_and_the_admin_share_one_budget_per_address(staff, settings):
    settings.MUSEUM_AUTH_FAILURES_PER_ADDRESS = 6
    api = Client(REMOTE_ADDR="10.0.0.1")
    for number in range(4):
        wrong = api.get("/v1.1/museum-hours", HTTP_AUTHORIZATION=basic_auth(f"u{number}", "nope"))
        assert wrong.status_code == 401

    assert [sign_in(f"v{number}", "nope").status_code for number in range(3)] == [200, 200, 429]
    assert api.get("/v1.1/museum-hours", HTTP_AUTHORIZATION=basic_auth("staff")).status_code == 429
