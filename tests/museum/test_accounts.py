from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import Group, Permission, User
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test import RequestFactory

from museum.accounts import (
    DESK_GROUP,
    DOOR_GROUP,
    ROLES,
    STAFF_GROUP,
    STAFF_PERMISSIONS,
    create_account,
)
from orders.models import Order
from tests.factories import PASSWORD, TicketFactory

# django-axes, which guards sign-ins, wants the request each comes with.
ADMIN_LOGIN = RequestFactory().post("/admin/login/")


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
    assert authenticate(ADMIN_LOGIN, username="ada", password="a long enough passphrase") == ada


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


def test_make_run_lists_every_demo_account_and_the_desks_address_last(db):
    run("create_demo_accounts")

    listed = run("create_demo_accounts", "--list", "--url", "http://127.0.0.1:8080")

    for username in ("staff", "desk", "visitor", "partner"):
        assert f"  {username} " in listed and f"{username}-demo-password" in listed
    assert "http://127.0.0.1:8080/desk/" in listed
    assert User.objects.get(username="desk").groups.get().name == DESK_GROUP
    assert User.objects.get(username="partner").groups.get().name == "Sales partners"


# Roles


def permission_names(user) -> set[str]:
    return {name for name in user.get_all_permissions()}


def test_create_account_door_makes_an_account_that_only_checks_tickets_in(db, monkeypatch):
    monkeypatch.setattr("sys.stdin", StringIO("a long enough passphrase\n"))
    out = run("create_account", "temp", "--door", "--password-stdin")

    temp = User.objects.get(username="temp")
    assert "door staff" in out
    assert temp.is_staff  # signs in at the admin's login, for the door page
    assert permission_names(temp) == {"orders.check_in_ticket"}


def test_an_account_is_staff_or_door_staff_not_both(db, monkeypatch):
    monkeypatch.setattr("sys.stdin", StringIO("a long enough passphrase\n"))
    with pytest.raises(CommandError):
        run("create_account", "both", "--staff", "--door", "--password-stdin")
    assert not User.objects.filter(username="both").exists()


def test_the_role_groups_exist_after_migrate_with_exactly_their_permissions(db):
    for name, permissions in ROLES.items():
        group = Group.objects.get(name=name)
        granted = group.permissions.values_list("content_type__app_label", "codename")
        assert {f"{app}.{codename}" for app, codename in granted} == set(permissions)


def test_migrate_puts_a_changed_role_group_back_to_its_permissions(transactional_db):
    door = Group.objects.get(name=DOOR_GROUP)
    door.permissions.add(Permission.objects.get(codename="delete_user"))
    Group.objects.get(name=STAFF_GROUP).delete()

    call_command("migrate", verbosity=0)

    assert set(door.permissions.values_list("codename", flat=True)) == {"check_in_ticket"}
    assert Group.objects.get(name=STAFF_GROUP).permissions.count() == len(STAFF_PERMISSIONS)


def test_museum_staff_run_the_programme_but_manage_no_users_and_delete_no_emails(db):
    grace = create_account(username="grace", password=PASSWORD, staff=True)

    granted = permission_names(grace)

    assert {"events.add_specialevent", "hours.change_museumday", "orders.view_ticket"} <= granted
    assert "orders.check_in_ticket" in granted
    assert "hours.delete_museumday" in granted  # "Apply a weekly pattern" removes days
    assert not {p for p in granted if p.startswith(("auth.", "museum."))}
    assert "orders.delete_order" not in granted
    assert "orders.delete_ticket" not in granted
    assert "django_tasks_database.view_dbtaskresult" in granted  # the background tasks


def test_museum_staff_see_the_background_tasks_in_the_admin(desk_client):
    tasks = desk_client.get("/admin/django_tasks_database/dbtaskresult/")

    assert tasks.status_code == 200
    assert b"anonymise_orders" in tasks.content  # its next run, waiting since migrate


def test_museum_staff_in_the_admin_cannot_delete_orders_or_touch_accounts(desk_client):
    order = TicketFactory().order

    assert desk_client.get("/admin/orders/order/").status_code == 200
    deleting = desk_client.post(f"/admin/orders/order/{order.pk}/delete/", {"post": "yes"})
    users = desk_client.get("/admin/auth/user/")
    adding = desk_client.get("/admin/auth/user/add/")
    groups = desk_client.get("/admin/auth/group/")

    assert deleting.status_code == 403
    assert Order.objects.filter(pk=order.pk).exists()
    assert (users.status_code, adding.status_code, groups.status_code) == (403, 403, 403)


def test_door_staff_see_nothing_in_the_admin(client, door_staff):
    client.force_login(door_staff)

    index = client.get("/admin/")

    assert index.status_code == 200
    assert "/door/" in index.content.decode()  # the one thing they do
    for page in ("/admin/orders/ticket/", "/admin/events/specialevent/", "/admin/auth/user/"):
        assert client.get(page).status_code == 403, page
    assert client.get("/admin/hours/museumday/").status_code == 403


def test_is_staff_alone_is_not_shown_the_door(client, bare_staff):
    client.force_login(bare_staff)

    assert "/door/" not in client.get("/admin/").content.decode()


# Usernames that differ only in case


def test_create_account_refuses_a_username_taken_in_another_case(db, monkeypatch):
    create_account(username="ada", password="a long enough passphrase")

    monkeypatch.setattr("sys.stdin", StringIO("a long enough passphrase\n"))
    with pytest.raises(CommandError, match="'Ada' already exists .*without regard to case"):
        run("create_account", "Ada", "--password-stdin")
    with pytest.raises(ValidationError):
        create_account(username="ADA", password="a long enough passphrase")
    assert list(User.objects.values_list("username", flat=True)) == ["ada"]


def test_the_database_refuses_a_username_taken_in_another_case(db):
    User.objects.create(username="grace")

    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(username="GRACE")


def test_sign_in_takes_the_username_as_spelled(db):
    create_account(username="ada", password="a long enough passphrase")

    assert (
        authenticate(ADMIN_LOGIN, username="ada", password="a long enough passphrase") is not None
    )
    assert authenticate(ADMIN_LOGIN, username="Ada", password="a long enough passphrase") is None


def test_the_admin_refuses_usernames_taken_in_another_case(admin_client):
    ada = create_account(username="ada", password="a long enough passphrase")
    grace = create_account(username="grace", password="a long enough passphrase")

    added = admin_client.post(
        "/admin/auth/user/add/",
        {"username": "ADA", "password1": "x7!long passphrase", "password2": "x7!long passphrase"},
    )
    renamed = admin_client.post(
        f"/admin/auth/user/{grace.pk}/change/",
        {"username": "Ada", "date_joined_0": "2030-01-01", "date_joined_1": "10:00:00"},
    )
    kept = admin_client.post(
        f"/admin/auth/user/{ada.pk}/change/",
        {"username": "ada", "date_joined_0": "2030-01-01", "date_joined_1": "10:00:00"},
    )

    assert added.status_code == 200 and "already exists" in added.content.decode()
    assert renamed.status_code == 200 and "without regard to case" in renamed.content.decode()
    assert kept.status_code == 302  # its own name, unchanged, is no clash
    assert sorted(User.objects.values_list("username", flat=True)) == ["ada", "admin", "grace"]


@pytest.mark.django_db(transaction=True)
def test_the_case_insensitive_index_migrates_back_and_forth():
    call_command("migrate", "museum", "0001", verbosity=0)
    User.objects.create(username="ada")
    User.objects.create(username="Ada")
    with pytest.raises(RuntimeError, match="'ada' and 'Ada'"):
        call_command("migrate", "museum", verbosity=0)

    User.objects.filter(username="Ada").delete()
    call_command("migrate", "museum", verbosity=0)

    with pytest.raises(IntegrityError):
        User.objects.create(username="ADA")


def test_create_account_desk_makes_a_front_desk_account(db, monkeypatch):
    monkeypatch.setattr("sys.stdin", StringIO("a long enough passphrase\n"))
    out = run("create_account", "desk1", "--desk", "--password-stdin")

    desk1 = User.objects.get(username="desk1")
    assert "front desk" in out
    assert list(desk1.groups.values_list("name", flat=True)) == [DESK_GROUP]
    assert desk1.is_staff  # signs in through the admin's login, for the desk
    assert permission_names(desk1) == set(ROLES[DESK_GROUP])
