"""Webhooks never wait behind emails: with 200 confirmation emails queued and the mail server
holding each one it is sent, a reseller's booking_update still reaches its receiver within 5 s of
the confirmation. Real processes, as production runs them: gunicorn, the task worker of the
`default` queue (emails) and the one of the `webhooks` queue, a stalling SMTP server and a
webhook receiver on loopback."""

import json
import time
import urllib.error
import urllib.request

import pytest
from werkzeug import Request, Response

from tests.servers import (
    NODE_DAY,
    SECRET_KEY,
    gunicorn_node,
    manage,
    stalling_mail_server,
    task_worker,
    wait_until,
)

pytestmark = pytest.mark.django_db(transaction=True)

EMAILS = 200
# What the issue asks: the reseller hears of its confirmed booking within 5 s.
WITHIN_SECONDS = 5

# 200 partner sales, each confirmed at once and its email enqueued, as the API would make them.
QUEUE_EMAILS = f"""
from django.contrib.auth.models import User
from orders.services.sale import place_order
partner = User.objects.get(username="visitor")
for n in range({EMAILS}):
    place_order(
        buyer=partner, email=f"buyer{{n}}@example.com", ticket_type="general",
        ticket_date=__import__("datetime").date.fromisoformat("{NODE_DAY.isoformat()}"),
        lines=[{{"category": "adult", "quantity": 1}}],
    )
# The minute's sweep offers the records to the webhooks (none wanted them yet): a confirmation's
# fan-out then has its own records to offer, not the 200 sales' backlog.
from webhooks.fanout import fan_out
fan_out()
"""


def emails_waiting(database: str) -> int:
    count = (
        "from orders.models import Order; "
        "print(Order.objects.filter(confirmation_sent_at__isnull=True).count())"
    )
    return int(manage(database, "shell", "-c", count).stdout.splitlines()[-1])


def octo(url: str, path: str, key: str, body: dict) -> dict:
    request = urllib.request.Request(
        f"{url}/octo{path}",
        method="POST",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{path}: {error.code} {error.read()!r}") from None


def test_a_booking_update_overtakes_200_queued_emails(node_database, tmp_path, httpserver):
    heard: list[tuple[float, dict]] = []

    def receive(request: Request) -> Response:
        heard.append((time.monotonic(), json.loads(request.get_data())))
        return Response("ok")

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    # Kept as an HMAC under the nodes' SECRET_KEY (octo.keys).
    made = manage(
        node_database,
        "create_api_key",
        "visitor",
        "--name",
        "t",
        environment={"SECRET_KEY": SECRET_KEY},
    )
    key = made.stdout.split()[-1]
    manage(node_database, "shell", "-c", QUEUE_EMAILS)
    # A receiver on loopback over http: local work's settings, as `make run` has them.
    hooks = {
        "DEBUG": "true",
        "MUSEUM_WEBHOOK_ALLOW_HTTP": "true",
        "MUSEUM_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    with stalling_mail_server() as (mail_server, mail):
        environment = {"DATABASE_URL": node_database, **mail, **hooks}
        with (
            gunicorn_node(environment=environment, log=tmp_path / "web.log") as url,
            task_worker(
                node_database,
                tmp_path / "emails.log",
                interval=0.2,
                environment={**mail, **hooks},
                queues="default",
            ),
            task_worker(
                node_database,
                tmp_path / "webhooks.log",
                interval=0.2,
                environment={**mail, **hooks},
                queues="webhooks",
            ),
        ):
            subscribed = {"url": httpserver.url_for("/hook"), "event": "booking_update"}
            octo(url, "/webhooks", key, subscribed)
            mail_server.next_held()  # the emails' worker is sending the first of 200: it stalls
            product = {"productId": "general", "optionId": "DEFAULT"}
            [day] = octo(url, "/availability", key, {**product, "localDate": str(NODE_DAY)})
            booking = {**product, "availabilityId": day["id"], "unitItems": [{"unitId": "adult"}]}

            def confirm() -> str:
                held = octo(url, "/bookings", key, booking)
                octo(url, f"/bookings/{held['uuid']}/confirm", key, {})
                return held["uuid"]

            def told(uuid: str) -> float | None:
                return next(
                    (
                        at
                        for at, body in heard
                        if body["booking"]["uuid"] == uuid
                        and body["booking"]["status"] == "CONFIRMED"
                    ),
                    None,
                )

            # A first booking shows the webhooks' worker up and working; the second is timed.
            first = confirm()
            wait_until(lambda: told(first) is not None, what="the first booking_update", timeout=60)
            second = confirm()
            confirmed_at = time.monotonic()
            wait_until(lambda: told(second) is not None, what="the booking_update", timeout=30)
            waiting = emails_waiting(node_database)

    told_at = told(second)
    assert told_at is not None
    assert told_at - confirmed_at < WITHIN_SECONDS, f"told after {told_at - confirmed_at:.1f} s"
    assert waiting > EMAILS - 5  # the emails were still queued behind the stalled one
