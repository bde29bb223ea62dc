"""A mail server that takes its time holds up nobody: the web server, the task worker and a
mail server on loopback that holds each message until the test lets it go. The worker claims
the email and makes and sends it holding no row lock, so the buyer's requests meanwhile answer
at once."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.live_http import Answer, call, sign_in
from tests.servers import (
    NODE_DAY,
    gunicorn_node,
    manage,
    stalling_mail_server,
    task_worker,
    wait_until,
)

# On PostgreSQL the nodes use the test database, emptied after each test.
pytestmark = pytest.mark.django_db(transaction=True)

ORDER = {
    "ticketType": "general",
    "ticketDate": NODE_DAY.isoformat(),
    "email": "family@example.com",
    "lines": [{"category": "adult", "quantity": 2}],
}
# Well past the database's lock timeout (5 s): a request that waited for the sender's lock
# would have had its 503 by then.
PATIENCE_SECONDS = 30
DOWNLOADS = 20


def emails_sent(database: str) -> int:
    """How many orders' emails the worker recorded as sent."""
    count = (
        "from orders.models import Order; "
        "print(Order.objects.filter(confirmation_sent_at__isnull=False).count())"
    )
    return int(manage(database, "shell", "-c", count).stdout.splitlines()[-1])


def test_a_buyer_cancelling_while_the_mail_server_stalls_is_answered_at_once(
    node_database, tmp_path
):
    with (
        stalling_mail_server() as (mail_server, mail),
        gunicorn_node(environment={"DATABASE_URL": node_database}, log=tmp_path / "web.log") as url,
        task_worker(node_database, tmp_path / "worker.log", interval=0.2, environment=mail),
    ):
        sign_in(url, username="visitor")
        placed = call("POST", f"{url}/v1.1/orders", username="visitor", body=ORDER)
        assert placed.status == 201, placed.content
        order_id = placed.json()["orderId"]
        release = mail_server.next_held()  # the worker is sending the email; the server stalls

        started = time.monotonic()
        cancel = f"{url}/v1.1/orders/{order_id}/cancel"
        cancelled = call("POST", cancel, username="visitor", timeout=PATIENCE_SECONDS)
        took = time.monotonic() - started
        # Answered while the server still held the message, not after the send.
        assert not mail_server.accepted, f"answered after the mail server's stall, in {took} s"
        assert cancelled.status == 200, cancelled.content
        assert cancelled.json()["status"] == "cancelled"

        release.set()
        # The confirmation went; the cancellation is told in an email of its own, after it.
        mail_server.next_held().set()
        wait_until(lambda: emails_sent(node_database) == 1, what="the email's outcome")
    confirmed, cancelled = mail_server.accepted
    assert b"Subject: Your 2 tickets" in confirmed and b"is cancelled" in cancelled
    assert mail_server.held.empty()


def download(url: str, order_id: str) -> Answer:
    pdf = f"{url}/v1.1/orders/{order_id}/tickets.pdf"
    return call("GET", pdf, username="visitor", timeout=PATIENCE_SECONDS)


def download_until(url: str, order_id: str, *, accepted: list, count: int) -> list[Answer]:
    """The order's PDF, again and again, until the mail server has accepted `count` emails:
    while the worker makes the PDF for the email (neither made it yet), then sends it."""
    answers = [download(url, order_id)]
    give_up_at = time.monotonic() + PATIENCE_SECONDS  # bounded, should the email never go
    while len(accepted) < count and time.monotonic() < give_up_at:
        answers.append(download(url, order_id))
    return answers


@pytest.mark.postgres_only  # row locks: SQLite has none
def test_the_pdf_downloaded_while_the_email_is_made_and_sent_is_never_a_503(
    node_database, tmp_path
):
    with (
        stalling_mail_server() as (mail_server, mail),
        gunicorn_node(environment={"DATABASE_URL": node_database}, log=tmp_path / "web.log") as url,
        task_worker(node_database, tmp_path / "worker.log", interval=0.2, environment=mail),
        ThreadPoolExecutor(max_workers=2) as buyers,
    ):
        sign_in(url, username="visitor")
        answers: list[Answer] = []
        for run in range(1, DOWNLOADS + 1):
            placed = call("POST", f"{url}/v1.1/orders", username="visitor", body=ORDER)
            assert placed.status == 201, placed.content
            until_sent = {"accepted": mail_server.accepted, "count": run}
            order_id = placed.json()["orderId"]
            downloading = [
                buyers.submit(download_until, url, order_id, **until_sent) for _ in range(2)
            ]
            release = mail_server.next_held()
            answers.append(download(url, order_id))  # while the mail server holds the email
            release.set()
            answers += [answer for done in downloading for answer in done.result()]
    statuses = [answer.status for answer in answers]
    assert statuses == [200] * len(answers), statuses
    assert len(mail_server.accepted) == DOWNLOADS
