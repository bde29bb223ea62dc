from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from museum.accounts import create_account


def run(command, *args) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def test_create_account_makes_a_visitor_or_a_staff_member(db, monkeypatch):
    monkeypatch.setattr("sys.stdin", StringIO("a long enough passphrase\n"))
    run("create_account", "ada", "--password-stdin")
    monkeypatch.setattr("sys.stdin", StringIO("another long passphrase\n"))
    run("create_account", "grace", "--staff", "--password-stdin")

    ada, grace = User.objects.get(username="ada"), User.objects.get(username="grace")
    assert not ada.is_staff and grace.is_staff
    assert grace.has_perm("events.change_specialevent")
    assert not ada.has_perm("events.change_specialevent")
    assert authenticate(username="ada", password="a long enough passphrase") == ada


def test_create_account_refuses_weak_passwords_and_existing_names(db, monkeypatch):
    monkeypatch.setattr("sys.stdin", StringIO("short\n"))
    with pytest.raises(CommandError):
        run("create_account", "ada", "--password-stdin")

    create_account(username="ada", password="a long enough passphrase")
    monkeypatch.setattr("sys.stdin", StringIO("a long enough passphrase\n"))
    with pytest.raises(CommandError, match="already exists"):
        run("create_account", "ada", "--password-stdin")


def test_demo_accounts_are_created_once_and_never_touched_again(db):
    first = run("create_demo_accounts")
    staff = User.objects.get(username="staff")
    staff.set_password("changed by the user")
    staff.save()

    second = run("create_demo_accounts")

    assert "staff / password: staff-demo-password" in first
    assert "left as it is" in second
    staff.refresh_from_db()
    assert staff.check_password("changed by the user")
    assert User.objects.get(username="staff").is_staff
    assert not User.objects.get(username="visitor").is_staff
