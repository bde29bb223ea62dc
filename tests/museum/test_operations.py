"""What an operator reads: request ids, /metrics and its counters, /readyz, the file email
backend. The same across workers: tests/test_metrics_and_logs_across_workers.py."""

import datetime as dt
import re
from pathlib import Path

import pytest
import time_machine
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from prometheus_client import REGISTRY

from museum.context import new_request_id
from museum.periodic import schedule_periodic_tasks
from orders import tokens
from orders.models import Order
from orders.services.sale import buy_ticket
from tests.conftest import assert_problem, run_task_worker
from tests.factories import MuseumDayFactory, UserFactory
from tests.servers import manage
from tickets.exceptions import AlreadyCheckedIn
from tickets.services import check_in

TOKEN = "a-token-for-the-scraper"
DOCS = Path(__file__).resolve().parents[2] / "docs"


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def scraper(settings, anonymous_client):
    settings.MUSEUM_METRICS_TOKEN = TOKEN
    anonymous_client.credentials(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    return anonymous_client


def test_each_answer_carries_its_request_id_and_a_problem_quotes_it(anonymous_client):
    made = anonymous_client.get("/v1.1/museum-hours")
    problem = assert_problem(made, 401)
    assert len(made["X-Request-ID"]) == 32
    assert problem["requestId"] == made["X-Request-ID"]

    offered = anonymous_client.get("/healthz", HTTP_X_REQUEST_ID="edge-1234abcd")
    assert offered["X-Request-ID"] == "edge-1234abcd"


@pytest.mark.parametrize("offered", ["short", "x" * 200, "forged\nline 12345678", "ü" * 10])
def test_a_malformed_request_id_is_replaced(anonymous_client, offered):
    answer = anonymous_client.get("/healthz", HTTP_X_REQUEST_ID=offered)
    assert answer["X-Request-ID"] != offered
    assert len(answer["X-Request-ID"]) == 32


@pytest.mark.django_db
def test_metrics_are_never_public(anonymous_client, settings):
    assert anonymous_client.get("/metrics").status_code == 404
    settings.MUSEUM_METRICS_TOKEN = TOKEN
    assert anonymous_client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    assert anonymous_client.get("/metrics").status_code == 404


@pytest.mark.django_db
def test_metrics_answer_a_listed_address_as_the_proxies_tell_it(anonymous_client, settings):
    settings.MUSEUM_METRICS_ADDRESSES = [ipaddress_network("10.1.0.0/16")]
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    listed = {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "10.1.2.3"}
    unlisted = {"REMOTE_ADDR": "10.1.2.3", "HTTP_X_FORWARDED_FOR": "192.0.2.1"}
    assert anonymous_client.get("/metrics", **listed).status_code == 200
    assert anonymous_client.get("/metrics", **unlisted).status_code == 404


def ipaddress_network(text: str):
    import ipaddress

    return ipaddress.ip_network(text)


@pytest.mark.django_db
def test_requests_are_counted_by_route_method_and_status(scraper, visitor_client):
    route = "v1.1/museum-hours"
    before = sample("museum_http_requests_total", route=route, method="GET", status="200")
    assert visitor_client.get("/v1.1/museum-hours").status_code == 200
    assert visitor_client.get("/no/such/page").status_code == 404
    text = scraper.get("/metrics").content.decode()
    after = sample("museum_http_requests_total", route=route, method="GET", status="200")
    assert after == before + 1
    assert 'museum_http_requests_total{method="GET",route="unmatched",status="404"}' in text
    assert "museum_http_request_duration_seconds_bucket" in text
    assert "museum_task_queue_depth" in text and "museum_emails_waiting" in text


@pytest.mark.django_db(transaction=True)
def test_sales_cancellations_and_check_ins_are_counted(visitor_client, visitor):
    today = MuseumDayFactory(date=timezone.localdate())
    sold = {"channel": "api", "type": "general", "category": "adult"}
    before = sample("museum_tickets_sold_total", **sold)
    body = {"ticketType": "general", "ticketDate": today.date.isoformat(), "email": "a@b.org"}
    answer = visitor_client.post("/v1.1/tickets", body, format="json")
    assert answer.status_code == 201
    assert sample("museum_tickets_sold_total", **sold) == before + 1

    ticket = Order.objects.get().tickets.get()
    scanned = tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date)
    admitted = sample("museum_check_ins_total", outcome="admitted", reason="")
    refused = sample("museum_check_ins_total", outcome="refused", reason="already_checked_in")
    check_in(scanned=scanned, by=UserFactory())
    with pytest.raises(AlreadyCheckedIn):
        check_in(scanned=scanned, by=UserFactory())
    assert sample("museum_check_ins_total", outcome="admitted", reason="") == admitted + 1
    assert (
        sample("museum_check_ins_total", outcome="refused", reason="already_checked_in")
        == refused + 1
    )


@pytest.mark.django_db(transaction=True)
def test_a_sale_rolled_back_counts_nothing(visitor):
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=3), capacity=0)
    before = sample("museum_tickets_sold_total", channel="task", type="general", category="adult")
    with pytest.raises(Exception):  # noqa: B017  sold out, whatever its class
        buy_ticket(buyer=visitor, ticket_type="general", ticket_date=day.date, email="a@b.org")
    after = sample("museum_tickets_sold_total", channel="task", type="general", category="adult")
    assert after == before


@pytest.mark.django_db(transaction=True)
def test_the_email_task_carries_the_request_id_and_its_sending_is_counted(visitor_client):
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=3))
    body = {"ticketType": "general", "ticketDate": day.date.isoformat(), "email": "a@b.org"}
    answer = visitor_client.post(
        "/v1.1/tickets", body, format="json", HTTP_X_REQUEST_ID="req-0123456789"
    )
    assert answer.status_code == 201
    task = DBTaskResult.objects.get(task_path__endswith="send_order_confirmation_email")
    assert task.args_kwargs["kwargs"]["request_id"] == "req-0123456789"
    sent = sample("museum_emails_sent_total")
    run_task_worker()
    assert sample("museum_emails_sent_total") == sent + 1


@pytest.mark.django_db(transaction=True)
def test_readyz_fails_while_no_worker_runs_the_queue(scraper, anonymous_client):
    schedule_periodic_tasks()  # as migrate does
    never_run = scraper.get("/readyz")
    assert never_run.status_code == 503
    assert never_run.json() == {
        "status": "unavailable",
        "database": "ok",
        "cache": "ok",
        "tasks": "no worker seen",
        # Reported, never a reason to be unready.
        "wallet_apple": "not configured",
        "wallet_google": "not configured",
        "wallet_apple_push": "not configured",
    }
    start = timezone.now()
    with time_machine.travel(start + dt.timedelta(minutes=2), tick=False):
        run_task_worker("default")  # the periodic tasks due by now, but the webhooks'
        webhooks_stopped = scraper.get("/readyz")
        assert webhooks_stopped.status_code == 503
        assert webhooks_stopped.json()["tasks"] == "no webhooks worker seen"
        run_task_worker("webhooks")
        assert scraper.get("/readyz").status_code == 200
    # The worker stops: ten minutes on, nobody has run the periodic tasks due since.
    with time_machine.travel(start + dt.timedelta(minutes=12), tick=False):
        stopped = scraper.get("/readyz")
        assert stopped.status_code == 503
        assert stopped.json()["tasks"] == "no worker seen"
        assert scraper.get("/healthz").status_code == 200  # liveness is not readiness
        run_task_worker()
        assert scraper.get("/readyz").status_code == 200


@pytest.mark.django_db
def test_readyz_tells_anyone_else_its_status_only(anonymous_client, settings):
    settings.MUSEUM_METRICS_TOKEN = TOKEN
    settings.MUSEUM_METRICS_ADDRESSES = [ipaddress_network("10.1.0.0/16")]
    wrong = {"HTTP_AUTHORIZATION": "Bearer wrong", "REMOTE_ADDR": "192.0.2.1"}

    for answer in [anonymous_client.get("/readyz"), anonymous_client.get("/readyz", **wrong)]:
        assert answer.status_code == 503
        assert answer.json() == {"status": "unavailable"}
    listed = anonymous_client.get("/readyz", REMOTE_ADDR="10.1.2.3")
    assert listed.json()["tasks"] == "no worker seen"


def test_the_file_email_backend_writes_to_email_file_path(tmp_path):
    send = (
        "from django.core.mail import send_mail; print(send_mail('s', 'b', 'a@b.org', ['c@d.org']))"
    )
    environment = {
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(tmp_path / "outbox"),
    }
    output = manage(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", "shell", "-c", send, environment=environment
    )
    assert output.stdout.splitlines()[-1] == "1"
    [written] = (tmp_path / "outbox").iterdir()
    assert "Subject: s" in written.read_text()


@pytest.mark.django_db(transaction=True)  # counted once the payment's transaction commits
def test_payments_are_counted_by_provider_and_state(online_client, staff_client):
    day = MuseumDayFactory(date=dt.date.today() + dt.timedelta(days=3)).date
    before = sample("museum_payments_total", provider="desk", state="confirmed")
    body = {
        "ticketType": "general",
        "ticketDate": day.isoformat(),
        "email": "a@example.com",
        "lines": [{"category": "adult", "quantity": 1}],
    }
    order = online_client.post("/v1.1/orders", body, format="json").json()

    staff_client.post(
        f"/v1.1/orders/{order['orderId']}/payments", {"provider": "desk"}, format="json"
    )

    assert sample("museum_payments_total", provider="desk", state="confirmed") == before + 1


def test_the_request_id_rule_is_the_one_operations_md_states_and_only_there():
    docs = {path.name: path.read_text() for path in DOCS.glob("*.md")}
    stated = re.search(
        r"`X-Request-ID` when well formed \((\d+) to (\d+) letters, digits, `\.`, `_`,\s+`-`",
        docs["operations.md"],
    )
    assert stated is not None
    low, high = int(stated[1]), int(stated[2])

    for taken in ["a" * low, "Z9._-" * (high // 5) + "x" * (high % 5)]:
        assert new_request_id(taken) == taken
    for replaced in ["a" * (low - 1), "a" * (high + 1), "abcdefgh:1", "abcdefgh/1"]:
        assert new_request_id(replaced) != replaced
    # No other page says (differently) which ids are taken.
    assert [name for name, text in docs.items() if re.search(r"letters,\s+digits", text)] == [
        "operations.md"
    ]
