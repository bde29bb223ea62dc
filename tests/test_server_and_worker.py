"""The web server and the task worker on one database, as `make run` serves: parallel orders are
all sold, and every confirmation email goes out. On SQLite both processes write one file, which
its settings make safe (WAL, a busy timeout, transactions that take the write lock first)."""

import pytest

from tests.live_http import in_parallel, post, sign_in
from tests.servers import NODE_DAY, gunicorn_node, manage, task_worker, wait_until

# On PostgreSQL the nodes use the test database, emptied after each test.
pytestmark = pytest.mark.django_db(transaction=True)

ORDERS = 40
UNSENT = (
    "from orders.models import Order; "
    "print(Order.objects.filter(confirmation_sent_at__isnull=True).count(), "
    "Order.objects.count())"
)


def test_parallel_orders_are_all_sold_and_all_mailed_beside_a_running_worker(
    node_database, tmp_path
):
    body = {
        "ticketType": "general",
        "ticketDate": NODE_DAY.isoformat(),
        "email": "family@example.com",
        "lines": [{"category": "adult", "quantity": 1}],
    }
    environment = {"DATABASE_URL": node_database, "MUSEUM_THROTTLE_PURCHASE_RATE": "1000/min"}
    with (
        gunicorn_node(environment=environment, log=tmp_path / "gunicorn.log") as url,
        task_worker(node_database, tmp_path / "worker.log", interval=0.2),
    ):
        sign_in(url, username="visitor")
        answers = in_parallel(ORDERS, lambda: post(f"{url}/v1.1/orders", body, "visitor"))
        assert [status for status, _ in answers] == [201] * ORDERS

        def unsent_and_sold() -> tuple[int, int]:
            output = manage(node_database, "shell", "-c", UNSENT).stdout
            unsent, sold = output.splitlines()[-1].split()
            return int(unsent), int(sold)

        wait_until(lambda: unsent_and_sold() == (0, ORDERS), what="every confirmation email")
    assert "database is locked" not in (tmp_path / "worker.log").read_text()
