"""A column's type changed by a migration while connections hold statements prepared before it:
the service's answers stay right, with no 500 (museum/postgresql/base.py)."""

import psycopg
import pytest
from django.db import OperationalError, connection, transaction

from orders.models import Order
from tests.factories import OrderFactory
from tests.servers import database_url

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]

# A column no translation shadows: the ORM reads it by its own name.
RESULT_TYPE_CHANGE = "ALTER TABLE orders_order ALTER COLUMN confirmation_code TYPE text"
BACK = "ALTER TABLE orders_order ALTER COLUMN confirmation_code TYPE varchar(40)"


@pytest.fixture
def migrate_meanwhile():
    """Alter the column from another connection, as `manage.py migrate` does; undone after."""
    url = database_url(connection.settings_dict)

    def alter(sql=RESULT_TYPE_CHANGE):
        with psycopg.connect(url, autocommit=True) as other:
            other.execute(sql)

    yield alter
    alter(BACK)


def list_codes() -> list[str]:
    return list(Order.objects.order_by("pk").values_list("confirmation_code", flat=True))


def test_a_statement_prepared_before_a_column_change_is_run_again(migrate_meanwhile):
    OrderFactory(confirmation_code="ORDER-1")
    for _ in range(6):  # prepared from the fifth run on
        assert list_codes() == ["ORDER-1"]
    migrate_meanwhile()
    assert list_codes() == ["ORDER-1"]


def test_inside_a_transaction_it_is_an_outage_and_the_next_try_succeeds(migrate_meanwhile):
    OrderFactory(confirmation_code="ORDER-1")
    for _ in range(6):
        assert list_codes() == ["ORDER-1"]
    migrate_meanwhile()
    with pytest.raises(OperationalError), transaction.atomic():
        list_codes()  # the API answers this with a 503 and Retry-After
    assert list_codes() == ["ORDER-1"]
