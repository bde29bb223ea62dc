"""A column's type changed by a migration while connections hold statements prepared before it:
the service's answers stay right, with no 500 (museum/postgresql/base.py)."""

import psycopg
import pytest
from django.db import OperationalError, connection, transaction

from events.models import LOCATION_MAX_LENGTH, SpecialEvent
from tests.factories import SpecialEventFactory
from tests.servers import database_url

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]

RESULT_TYPE_CHANGE = "ALTER TABLE events_specialevent ALTER COLUMN location TYPE text"
BACK = f"ALTER TABLE events_specialevent ALTER COLUMN location TYPE varchar({LOCATION_MAX_LENGTH})"


@pytest.fixture
def migrate_meanwhile():
    """Alter the column from another connection, as `manage.py migrate` does; undone after."""
    url = database_url(connection.settings_dict)

    def alter(sql=RESULT_TYPE_CHANGE):
        with psycopg.connect(url, autocommit=True) as other:
            other.execute(sql)

    yield alter
    alter(BACK)


def list_locations() -> list[str]:
    return list(SpecialEvent.objects.order_by("pk").values_list("location", flat=True))


def test_a_statement_prepared_before_a_column_change_is_run_again(migrate_meanwhile):
    SpecialEventFactory(location="Main hall")
    for _ in range(6):  # prepared from the fifth run on
        assert list_locations() == ["Main hall"]
    migrate_meanwhile()
    assert list_locations() == ["Main hall"]


def test_inside_a_transaction_it_is_an_outage_and_the_next_try_succeeds(
    migrate_meanwhile, staff_client
):
    SpecialEventFactory(location="Main hall")
    for _ in range(6):
        assert list_locations() == ["Main hall"]
    migrate_meanwhile()
    with pytest.raises(OperationalError), transaction.atomic():
        list_locations()  # the API answers this with a 503 and Retry-After
    assert list_locations() == ["Main hall"]
    assert staff_client.get("/v1.1/special-events").status_code == 200
