"""Reads stay cheap as the museum grows: a few queries each, and indexes under every one.

The benchmark itself (`make bench`, docs/performance.md) is not part of the suite.
"""

import datetime as dt
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.models import AuditRecord
from bench import FLOOR_PATH, data, plans
from orders.models import TicketImage
from tests.factories import MuseumDayFactory, SpecialEventFactory, days_from_today
from tests.orders.conftest import order_body

ORDERS = "/v1.1/orders"


@pytest.mark.postgres_only
def test_reads_use_indexes_with_a_museums_volume_of_rows(db):
    # As docs/performance.md recommends for a database that fits in memory; with the default
    # of 4, PostgreSQL reckons 200 index lookups dearer than reading all 10,000 events.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL random_page_cost = 1.1")
    # The full volume (COPY, a few seconds): on small tables a sequential scan is always cheaper.
    data.load(volume=data.Volume(drawn_tickets=1))

    read_plans = plans.explain_reads()

    assert {plan.read for plan in read_plans} == {
        "list events (a week, 30)",
        "get event",
        "museum hours (30)",
        "ticket image (stored)",
        "check-in by QR token",
        "check-in by code",
        "check-in by member card",
    }
    scanned = [plan for plan in read_plans if plan.seq_scans & plans.LARGE_TABLES]
    assert not scanned, plans.report(scanned)


def test_getting_an_event_costs_a_few_queries(visitor_client, django_assert_max_num_queries):
    event = SpecialEventFactory(dates=[dt.date(2030, 1, 1), dt.date(2030, 1, 2)])

    # The user, the event, its dates.
    with django_assert_max_num_queries(3):
        response = visitor_client.get(f"/v1.1/special-events/{event.pk}")

    assert response.json()["dates"] == ["2030-01-01", "2030-01-02"]


def test_drawing_a_ticket_image_costs_a_few_queries(visitor_client, django_assert_max_num_queries):
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(3))
    bought = visitor_client.post(
        "/v1.1/tickets",
        {"ticketType": "general", "ticketDate": day.date.isoformat(), "email": "a@example.com"},
        format="json",
    ).json()
    assert not TicketImage.objects.exists()  # the purchase leaves the drawing to a first use

    # The user, the look for a drawn image, the ticket with its event, and get_or_create's look,
    # savepoint, insert and release.
    with django_assert_max_num_queries(7):
        response = visitor_client.get(f"/v1.1/tickets/{bought['ticketId']}/qr")

    assert response.status_code == 200
    assert TicketImage.objects.count() == 1


def test_the_benchmark_floor_is_served_by_the_benchmark_urls_alone(anonymous_client, settings):
    assert anonymous_client.get(FLOOR_PATH).status_code == 404

    settings.ROOT_URLCONF = "bench.urls"
    assert anonymous_client.get(FLOOR_PATH).json() == {"status": "ok"}
    assert anonymous_client.get("/healthz").status_code == 200


def test_the_wsgi_entry_point_leaves_what_it_loaded_out_of_garbage_collection():
    # In a fresh interpreter, as a server's worker imports it.
    frozen = subprocess.run(
        [sys.executable, "-c", "import gc, museum.wsgi; print(gc.get_freeze_count())"],
        capture_output=True,
        text=True,
        check=True,
        cwd=settings.BASE_DIR,
    )

    assert int(frozen.stdout) > 50_000  # Django, DRF, the URLs and views: ~100,000


def test_confirming_a_held_order_costs_a_few_queries(visitor_client, django_assert_num_queries):
    day = MuseumDayFactory(date=days_from_today(3))
    held = visitor_client.post(ORDERS, order_body(day.date, ("adult", 2), hold=True), format="json")

    # The account (its permissions are kept with its credential since it placed the order); the
    # order, locked, with what its refunds come to (the answer's refundDue); its email's task;
    # the order; its tickets unheld; its payment on account; its audit record; its tickets read
    # once, for the answer, the metrics and its invoice; the invoice's partner (its payment on
    # account is known: one of its total); its donations, with their funds, once for its invoice
    # and its answer; its number (one statement) and the invoice. The test's transaction adds a
    # savepoint and its release.
    with django_assert_num_queries(14):
        answer = visitor_client.post(f"{ORDERS}/{held.json()['orderId']}/confirm")

    assert answer.status_code == 200 and answer.json()["status"] == "confirmed"
    assert all(not ticket["cancelled"] for ticket in answer.json()["tickets"])


def test_cancelling_an_order_costs_a_few_queries(visitor_client, django_assert_num_queries):
    day = MuseumDayFactory(date=days_from_today(3))
    order = visitor_client.post(ORDERS, order_body(day.date, ("adult", 2)), format="json").json()

    # The account and its permissions (Django's two queries); the order, locked, with what its
    # refunds come to, and its tickets, locked; the tickets voided; their images' keys; the
    # payments with what each paid back already; the refunds; what they give back added to the
    # order's `paid_back` (one UPDATE, which the database checks against what it was paid); the
    # invoice they correct, the credit note's number (one statement) and the credit note; the
    # places given back, and (without a shared cache; kept in the process with one) the drops
    # not over, whose line they may go to; the refunds' and the cancellation's audit records,
    # in one INSERT; the
    # change's email (its task, and the order closed and noting it in one UPDATE); the answer's
    # donations, with their funds. The answer's refundDue is what the refunds came to plus the
    # new ones: nothing is read back. The test's transaction adds a savepoint and its release.
    with django_assert_num_queries(21):
        answer = visitor_client.post(f"{ORDERS}/{order['orderId']}/cancel")

    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    assert answer.json()["refundDue"] == order["total"]
    assert AuditRecord.objects.filter(action__in=["refunded", "cancelled"]).count() == 2


def test_a_new_order_s_answer_reads_no_refunds(visitor_client):
    # It has none: refundDue is 0 without a statement (orders/services/sale.py).
    day = MuseumDayFactory(date=days_from_today(3))

    with CaptureQueriesContext(connection) as queries:
        answer = visitor_client.post(ORDERS, order_body(day.date, ("adult", 2)), format="json")

    assert answer.status_code == 201 and answer.json()["refundDue"] == 0
    assert not [q for q in queries.captured_queries if "orders_refund" in q["sql"]]
