# The desk sells what the orders tests sell: their database and days.
from tests.desk.test_desk import desk  # noqa: F401, E402 (a clerk's session, for every desk test)
from tests.orders.conftest import open_day, orders_use_the_database, timed_day  # noqa: F401
