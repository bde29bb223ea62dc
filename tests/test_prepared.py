"""Prepared queries give what the ORM gives, values converted, on SQLite and PostgreSQL alike.

Only museum/authentication.py's load_account still uses them; this goes with museum/prepared.py.
"""

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.utils import timezone

from museum.authentication import load_account
from museum.prepared import PreparedQuery, PreparedUpdate, db_value
from tests.factories import TicketFactory, UserFactory
from tickets.models import Ticket


def field_values(instance) -> list:
    return [getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields]


def test_an_account_loads_with_every_field_as_the_orm_loads_it(db):
    user = UserFactory(last_login=timezone.now(), is_staff=True)

    loaded = load_account(user.pk)

    assert field_values(loaded) == field_values(User.objects.get(pk=user.pk))
    assert loaded.is_staff is True and loaded.last_login == user.last_login


def test_an_unknown_account_is_none(db):
    assert load_account(10**9) is None


def test_a_prepared_query_takes_exactly_its_parameters(db):
    query = PreparedQuery(lambda: User.objects.filter(pk=0).filter(username="x"))

    with pytest.raises(TypeError):
        query.first(1)


@pytest.mark.django_db(transaction=True)
def test_a_query_prepared_in_one_thread_runs_in_another():
    # Connections belong to their thread; a prepared query must not keep the one it was built on.
    user = UserFactory()
    assert load_account(user.pk) == user

    def in_another_thread():
        try:
            return load_account(user.pk)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(in_another_thread).result() == user


def test_a_prepared_update_changes_what_the_orm_update_would(db):
    claim = PreparedUpdate(
        lambda: (
            Ticket.objects.filter(pk=uuid.UUID(int=0), checked_in_at__isnull=True),
            {"checked_in_at": timezone.now(), "checked_in_by": 0},
        )
    )
    ticket, other = TicketFactory(), TicketFactory()
    at = timezone.now()
    staff = UserFactory(is_staff=True)
    at_field = Ticket._meta.get_field("checked_in_at")

    def run():
        return claim.run(db_value(at_field, at), staff.pk, db_value(Ticket._meta.pk, ticket.pk))

    assert run() == 1
    assert run() == 0  # no longer unclaimed
    ticket.refresh_from_db()
    other.refresh_from_db()
    assert (ticket.checked_in_at, ticket.checked_in_by) == (at, staff)
    assert other.checked_in_at is None
    with pytest.raises(TypeError):
        claim.run(staff.pk)
