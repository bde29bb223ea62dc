# The desk sells what the orders tests sell: their database and days.
from tests.orders.conftest import open_day, orders_use_the_database, timed_day  # noqa: F401
