"""PostgreSQL with server-bound parameters and prepared statements (museum/postgresql)."""

import datetime as dt

import pytest
from django.db import connection

from hours.models import MuseumDay
from museum.postgresql.base import MAX_PARAMETERS
from tests.servers import database_url, manage

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db]


def test_a_statement_run_again_is_prepared_so_postgresql_plans_it_once():
    days = MuseumDay.objects.filter(date__gte=dt.date(2030, 1, 1)).order_by("date")
    for _ in range(6):
        list(days.all())  # a fresh queryset each time: the query runs again

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [statement for (statement,) in cursor.fetchall()]

    assert any('FROM "hours_museumday"' in statement for statement in prepared), prepared


def test_a_deletion_beyond_the_protocols_parameters_collects_related_rows_in_batches():
    # Deleting days makes Django look for their slots and tickets by the days' keys: one
    # parameter per day, more than one statement may carry.
    start = dt.date(2000, 1, 1)
    count = MAX_PARAMETERS + 100
    MuseumDay.objects.bulk_create(
        MuseumDay(date=start + dt.timedelta(n), is_closed=True) for n in range(count)
    )

    deleted, _ = MuseumDay.objects.filter(date__gte=start, date__lt=dt.date(2200, 1, 1)).delete()

    assert deleted == count


def test_prepared_statements_can_be_turned_off_for_a_pooler_in_transaction_mode():
    show = "from django.db import connection as c; print(c.settings_dict['OPTIONS'])"
    url = database_url(connection.settings_dict)

    on = manage(url, "shell", "--no-imports", "-c", show)
    off = manage(
        url, "shell", "--no-imports", "-c", show, environment={"DB_PREPARED_STATEMENTS": "false"}
    )

    assert "'prepare_threshold': 5" in on.stdout
    assert "server_side_binding" not in off.stdout
