"""Idempotency-Key on the two POSTs that create: tickets and special events."""

import datetime as dt
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection, connections
from django.utils import timezone

from events.models import SpecialEvent
from hours.models import MuseumDay
from museum import idempotency
from museum.models import IdempotencyKey
from orders.models import Order, Ticket
from tests.conftest import EVENT, assert_problem, client_for
from tests.factories import MuseumDayFactory, UserFactory, partner_member
from tests.live_http import call, sign_in

TICKETS = "/v1.1/tickets"
EVENTS = "/v1.1/special-events"


def later(days: int = 3) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


def general_ticket(day: dt.date, email: str = "ada@example.com") -> dict:
    return {"ticketType": "general", "ticketDate": day.isoformat(), "email": email}


def send(client, url: str, body: dict, key: str | None):
    extra = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return client.post(url, body, format="json", **extra)


@pytest.fixture
def open_day(db):
    return MuseumDayFactory(date=later())


@pytest.fixture
def operation(request, open_day, visitor_client, staff_client):
    """(client, url, body, created rows) for each create operation."""
    if request.param == "tickets":
        return visitor_client, TICKETS, general_ticket(open_day.date), Ticket.objects
    return staff_client, EVENTS, EVENT, SpecialEvent.objects


both_operations = pytest.mark.parametrize("operation", ["tickets", "events"], indirect=True)


@both_operations
def test_a_retry_with_the_key_gets_the_first_answer_without_doing_it_again(operation):
    client, url, body, created = operation

    first = send(client, url, body, "retry-1")
    second = send(client, url, body, "retry-1")

    assert first.status_code == second.status_code == 201
    assert second.content == first.content
    assert second["Content-Type"] == first["Content-Type"] == "application/json"
    assert second["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert created.count() == 1


def test_a_replayed_purchase_sends_no_second_email(visitor_client, open_day):
    for _ in range(3):
        send(visitor_client, TICKETS, general_ticket(open_day.date), "one-ticket")

    assert Order.objects.count() == Ticket.objects.count() == 1
    assert MuseumDay.objects.get(pk=open_day.pk).sold == 1


@both_operations
def test_without_a_key_every_post_does_the_work(operation):
    client, url, body, created = operation

    send(client, url, body, None)
    send(client, url, body, None)

    assert created.count() == 2


@both_operations
def test_the_key_with_another_body_is_a_422_and_does_nothing(operation):
    client, url, body, created = operation
    send(client, url, body, "changed-body")

    response = send(
        client, url, {**body, "email": "other@example.com", "name": "Other"}, "changed-body"
    )

    assert assert_problem(response, 422)["code"] == "idempotency_key_reused"
    assert created.count() == 1


def test_the_key_on_another_operation_is_a_422(staff_client, open_day):
    send(staff_client, EVENTS, EVENT, "shared-key")

    response = send(staff_client, TICKETS, general_ticket(open_day.date), "shared-key")

    assert_problem(response, 422)
    assert not Ticket.objects.exists()


def test_keys_belong_to_their_account(visitor_client, open_day):
    other = client_for(UserFactory(username="other"))
    body = general_ticket(open_day.date)

    first = send(visitor_client, TICKETS, body, "same-key")
    second = send(other, TICKETS, body, "same-key")

    assert first.status_code == second.status_code == 201
    assert first.json()["ticketId"] != second.json()["ticketId"]
    assert Ticket.objects.count() == 2


def test_a_refusal_is_kept_and_replayed_like_a_success(visitor_client):
    day = MuseumDayFactory(date=later(), is_closed=True, opens_at=None, closes_at=None)
    body = general_ticket(day.date)
    refused = send(visitor_client, TICKETS, body, "closed-day")
    assert assert_problem(refused, 400)["reason"] == "museum_closed"
    MuseumDay.objects.filter(pk=day.pk).update(
        is_closed=False, opens_at=dt.time(9), closes_at=dt.time(17)
    )

    # The same request under the same key is the same answer; a new key buys the ticket.
    replay = send(visitor_client, TICKETS, body, "closed-day")
    assert replay.content == refused.content and replay["Content-Type"] == refused["Content-Type"]
    assert not Ticket.objects.exists()
    assert send(visitor_client, TICKETS, body, "open-day").status_code == 201


def test_a_conflict_is_not_kept_so_a_retry_can_succeed(visitor_client):
    day = MuseumDayFactory(date=later(), capacity=0)
    body = general_ticket(day.date)
    assert assert_problem(send(visitor_client, TICKETS, body, "sold-out"), 409)["reason"] == (
        "sold_out"
    )
    MuseumDay.objects.filter(pk=day.pk).update(capacity=1)

    retry = send(visitor_client, TICKETS, body, "sold-out")

    assert retry.status_code == 201 and "Idempotent-Replayed" not in retry
    assert Ticket.objects.count() == 1


def test_a_request_the_throttle_refused_leaves_the_key_free(visitor_client, open_day, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "1/min", "anon": "60/min", "purchase": "30/min"},
    }
    body = general_ticket(open_day.date)
    assert send(visitor_client, TICKETS, body, None).status_code == 201
    assert_problem(send(visitor_client, TICKETS, body, "throttled"), 429)
    cache.clear()  # the throttle's window has passed

    retry = send(visitor_client, TICKETS, body, "throttled")

    assert retry.status_code == 201 and "Idempotent-Replayed" not in retry
    assert Ticket.objects.count() == 2


@pytest.mark.parametrize(
    "key",
    ["", "x" * 256, "tab\there", "del\x7f", "caf\u00e9", "line\nbreak"],
    ids=["empty", "too-long", "tab", "delete", "non-ascii", "newline"],
)
def test_a_malformed_key_is_a_400_problem(visitor_client, open_day, key):
    response = send(visitor_client, TICKETS, general_ticket(open_day.date), key)

    assert assert_problem(response, 400)["code"] == "invalid_idempotency_key"
    assert not Ticket.objects.exists() and not IdempotencyKey.objects.exists()


def test_the_longest_key_and_every_printable_character_are_accepted(visitor_client, open_day):
    printable = "".join(chr(code) for code in range(0x20, 0x7F))
    for key in ["k" * 255, printable]:
        response = send(visitor_client, TICKETS, general_ticket(open_day.date), key)
        assert response.status_code == 201, response.content


def test_a_key_is_forgotten_after_a_day_and_purged(visitor_client, open_day):
    body = general_ticket(open_day.date)
    send(visitor_client, TICKETS, body, "yesterday")
    send(visitor_client, TICKETS, body, "today-1")
    # The key was used a day and a minute ago (the day's ticket is still on sale).
    a_day_ago = timezone.now() - idempotency.KEY_LIFETIME - dt.timedelta(minutes=1)
    IdempotencyKey.objects.filter(key="yesterday").update(created_at=a_day_ago)

    # Past its lifetime the key is new again: the request is done, and kept from now on.
    again = send(visitor_client, TICKETS, body, "yesterday")
    assert again.status_code == 201 and "Idempotent-Replayed" not in again
    assert Ticket.objects.count() == 3

    IdempotencyKey.objects.filter(key="today-1").update(created_at=a_day_ago)
    call_command("purge_idempotency_keys", stdout=StringIO())
    assert set(IdempotencyKey.objects.values_list("key", flat=True)) == {"yesterday"}


def test_both_operations_document_the_header_and_its_problems(anonymous_client):
    schema = anonymous_client.get("/v1.1/openapi.json").json()

    for path in ["/tickets", "/special-events"]:
        operation = schema["paths"][path]["post"]
        [header] = [p for p in operation["parameters"] if p["name"] == "Idempotency-Key"]
        assert header["in"] == "header" and not header.get("required")
        assert {"409", "422"} <= operation["responses"].keys()


# PostgreSQL: the row lock that tells a running request from a finished one, across processes.


def hold_key_lock(user, key: str):
    """Another connection, as another worker would, holding the key's row lock; close to free."""
    other = connections.create_connection("default")
    other.set_autocommit(False)
    with other.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM museum_idempotencykey WHERE user_id = %s AND key = %s FOR UPDATE",
            [user.pk, key],
        )
        assert cursor.fetchone() == (1,)
    return other


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_key_whose_request_is_running_is_a_409_with_retry_after(visitor):
    day = MuseumDayFactory(date=later())
    client, body = client_for(visitor), general_ticket(day.date)
    IdempotencyKey.objects.create(user=visitor, key="running", created_at=timezone.now())
    worker = hold_key_lock(visitor, "running")
    # Were the request to wait for the lock instead, the test would fail rather than hang.
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '2s'")
    try:
        response = send(client, TICKETS, body, "running")
    finally:
        worker.rollback()
        worker.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")

    assert assert_problem(response, 409)["code"] == "idempotency_key_in_use"
    assert response["Retry-After"] == "1"
    assert not Ticket.objects.exists()
    # Once the running request ends without an answer, the key is free for the retry.
    assert send(client, TICKETS, body, "running").status_code == 201


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_server_error_is_not_kept_and_rolls_back_with_the_work(visitor):
    day = MuseumDayFactory(date=later(), capacity=5)
    client, body = client_for(visitor), general_ticket(day.date)
    # Another transaction holds the day's row, and ours gives up waiting: a 503 mid-purchase.
    other = connections.create_connection("default")
    other.set_autocommit(False)
    with other.cursor() as cursor:
        cursor.execute("SELECT 1 FROM hours_museumday WHERE date = %s FOR UPDATE", [day.date])
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '200ms'")
    try:
        assert_problem(send(client, TICKETS, body, "timed-out"), 503)
    finally:
        other.rollback()
        other.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")

    assert not Ticket.objects.exists() and MuseumDay.objects.get(pk=day.pk).sold == 0
    retry = send(client, TICKETS, body, "timed-out")
    assert retry.status_code == 201 and "Idempotent-Replayed" not in retry


def parallel_purchases(live_server, count: int, key: str | None) -> list:
    day = MuseumDayFactory(date=later(), capacity=100)
    body = general_ticket(day.date)
    sign_in(live_server.url, username="visitor")
    start_together = threading.Barrier(count, timeout=10)

    def buy():
        start_together.wait()
        return call(
            "POST",
            f"{live_server.url}{TICKETS}",
            username="visitor",
            body=body,
            idempotency_key=key,
        )

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda _: buy(), range(count)))


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_parallel_requests_with_one_key_buy_one_ticket(live_server):
    partner_member(username="visitor")

    answers = parallel_purchases(live_server, 8, key="double-click")

    assert Ticket.objects.count() == 1 and Order.objects.count() == 1
    statuses = Counter(answer.status for answer in answers)
    assert set(statuses) <= {201, 409} and statuses[201] >= 1
    assert len({answer.content for answer in answers if answer.status == 201}) == 1
    assert {answer.json()["code"] for answer in answers if answer.status == 409} <= {
        "idempotency_key_in_use"
    }


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_without_a_key_parallel_requests_buy_a_ticket_each(live_server):
    # The double click the key is for: the same purchase, sent eight times, is eight tickets.
    partner_member(username="visitor")

    answers = parallel_purchases(live_server, 8, key=None)

    assert [answer.status for answer in answers] == [201] * 8
    assert Ticket.objects.count() == 8
