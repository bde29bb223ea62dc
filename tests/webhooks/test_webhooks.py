"""Webhooks from the audit log to a real receiver on loopback, verified with standardwebhooks."""

import datetime as dt
import json

import pytest
import time_machine
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from standardwebhooks.webhooks import Webhook
from werkzeug import Response

from museum.lost_work import LOST_AFTER, RETRY
from orders.models import Order, OrderStatus
from orders.services.cancellation import cancel_order
from orders.services.holds import release_expired_holds
from tests.conftest import EVENT, client_for, run_task_worker
from tests.factories import MuseumDayFactory, days_from_today, partner_member, staff_member
from tests.orders.conftest import order_body
from tickets.services import check_in
from webhooks.delivery import claim_delivery, deliver_webhook, requeue_lost
from webhooks.fanout import fan_out
from webhooks.models import Delivery, DeliveryState, EventType, Subscription

pytestmark = [
    pytest.mark.django_db(transaction=True),  # on_commit and the task worker
    pytest.mark.usefixtures("receivers_allowed"),
]


def subscribe(client, httpserver, *types) -> dict:
    answer = client.post(
        "/v1.1/webhooks",
        {"url": httpserver.url_for("/hook"), "eventTypes": list(types)},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    return answer.json()


def received(httpserver, secret: str) -> list[tuple[dict, dict]]:
    """Each request the receiver got, verified: (its headers, its body)."""
    verified = []
    for request, _ in httpserver.log:
        headers = dict(request.headers)
        body = Webhook(secret).verify(request.get_data(as_text=True), headers)
        verified.append(({k.lower(): v for k, v in headers.items()}, body))
    return verified


def test_a_partner_hears_of_an_event_created_and_changed_as_the_contract_says(
    httpserver, visitor_client, staff_client
):
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=202)
    subscription = subscribe(visitor_client, httpserver, "publishNewEvent")
    assert subscription["active"] is True and subscription["secret"].startswith("whsec_")

    created = staff_client.post("/v1.1/special-events", EVENT, format="json").json()
    changed = staff_client.patch(
        f"/v1.1/special-events/{created['eventId']}", {"price": 12}, format="json"
    ).json()
    run_task_worker()

    bodies = [body for _, body in received(httpserver, subscription["secret"])]
    assert bodies == [created, changed]  # exactly the API's SpecialEvent, each time
    assert bodies[1]["price"] == 12


def test_every_order_event_reaches_the_receiver(httpserver, online_client, staff):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    secret = subscribe(
        client_for(staff_with_webhooks(staff)),
        httpserver,
        "order.confirmed",
        "order.cancelled",
        "order.expired",
        "order.refunded",
    )["secret"]
    day = MuseumDayFactory(date=days_from_today(10))
    partner = client_for(partner_member(username="shop"))

    paid = partner.post("/v1.1/orders", order_body(day.date, ("adult", 2)), format="json").json()
    cancel_order(order_id=paid["orderId"], by=staff)  # confirmed on account: refunded too
    held = online_client.post("/v1.1/orders", order_body(day.date), format="json").json()
    with time_machine.travel(timezone.now() + dt.timedelta(hours=1)):
        assert release_expired_holds() == 1
    run_task_worker()

    events = [(body["type"], body["data"]["orderId"]) for _, body in received(httpserver, secret)]
    assert sorted(events) == sorted(
        [
            ("order.confirmed", paid["orderId"]),
            ("order.refunded", paid["orderId"]),
            ("order.cancelled", paid["orderId"]),
            ("order.expired", held["orderId"]),
        ]
    )
    cancelled = next(b for _, b in received(httpserver, secret) if b["type"] == "order.cancelled")
    # The order as GET /v1.1/orders/{orderId} answers it.
    assert cancelled["data"] == staff_client_get_order(staff, paid["orderId"])
    assert Order.objects.get(pk=held["orderId"]).status == OrderStatus.EXPIRED


def staff_with_webhooks(staff):
    from django.contrib.auth.models import Permission

    staff.user_permissions.add(Permission.objects.get(codename="manage_own_webhooks"))
    return staff


def staff_client_get_order(staff, order_id) -> dict:
    return client_for(staff).get(f"/v1.1/orders/{order_id}").json()


def test_a_partner_hears_only_of_its_own_orders(httpserver, visitor_client, online_client):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    subscribe(visitor_client, httpserver, "order.confirmed")
    day = MuseumDayFactory(date=days_from_today(10))
    other = client_for(partner_member(username="other-shop"))

    other.post("/v1.1/orders", order_body(day.date), format="json")
    run_task_worker()

    assert httpserver.log == []


def test_a_failure_then_success_is_two_attempts_with_one_webhook_id(httpserver, visitor_client):
    httpserver.expect_ordered_request("/hook").respond_with_data("down", status=500)
    httpserver.expect_ordered_request("/hook").respond_with_data("ok", status=200)
    secret = subscribe(visitor_client, httpserver, "order.confirmed")["secret"]
    day = MuseumDayFactory(date=days_from_today(10))
    visitor_client.post("/v1.1/orders", order_body(day.date), format="json")

    run_task_worker()
    assert len(httpserver.log) == 1
    with time_machine.travel(timezone.now() + dt.timedelta(seconds=6)):  # the first retry: 5 s
        run_task_worker()

    attempts = received(httpserver, secret)
    assert [answer.status_code for _, answer in httpserver.log] == [500, 200]
    assert len({headers["webhook-id"] for headers, _ in attempts}) == 1
    delivery = Delivery.objects.get()
    assert (delivery.state, delivery.attempts) == (DeliveryState.DELIVERED, 2)
    assert [a.status for a in delivery.attempts_made.all()] == [500, 200]
    assert delivery.attempts_made.first().answer == "down"


def test_a_receiver_answering_gone_disables_the_subscription(httpserver, visitor_client):
    httpserver.expect_request("/hook").respond_with_data("", status=410)
    subscribed = subscribe(visitor_client, httpserver, "order.confirmed")
    day = MuseumDayFactory(date=days_from_today(10))
    visitor_client.post("/v1.1/orders", order_body(day.date), format="json")
    run_task_worker()

    shown = visitor_client.get(f"/v1.1/webhooks/{subscribed['webhookId']}").json()
    assert shown["active"] is False and "410" in shown["disabledReason"]
    assert Delivery.objects.get().state == DeliveryState.FAILED


def test_a_redirect_is_a_failure_and_retry_after_is_honoured(httpserver, visitor_client):
    httpserver.expect_ordered_request("/hook").respond_with_response(
        Response("", status=503, headers={"Retry-After": "120"})
    )
    httpserver.expect_ordered_request("/hook").respond_with_response(
        Response("", status=302, headers={"Location": "http://127.0.0.1:1/"})
    )
    subscribe(visitor_client, httpserver, "order.confirmed")
    day = MuseumDayFactory(date=days_from_today(10))
    visitor_client.post("/v1.1/orders", order_body(day.date), format="json")
    run_task_worker()

    with time_machine.travel(timezone.now() + dt.timedelta(seconds=60)):
        run_task_worker()  # the 5 s retry would be due; Retry-After said 120
    assert len(httpserver.log) == 1
    with time_machine.travel(timezone.now() + dt.timedelta(seconds=130)):
        run_task_worker()
    delivery = Delivery.objects.get()
    assert [a.status for a in delivery.attempts_made.all()] == [503, 302]
    assert delivery.state == DeliveryState.PENDING  # a redirect is not followed: tried again


@pytest.mark.parametrize("host", ["127.0.0.1", "10.0.0.1", "localhost"])
def test_a_receiver_on_a_private_address_is_refused_unless_allowed(visitor_client, settings, host):
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = []
    body = {"url": f"http://{host}:8080/hook", "eventTypes": ["order.confirmed"]}

    refused = visitor_client.post("/v1.1/webhooks", body, format="json")
    assert refused.status_code == 400
    assert "not public" in json.dumps(refused.json())

    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = [host]
    assert visitor_client.post("/v1.1/webhooks", body, format="json").status_code == 201


def test_plain_http_is_refused_in_production(visitor_client, settings):
    settings.MUSEUM_WEBHOOK_ALLOW_HTTP = False
    body = {"url": "http://127.0.0.1:8080/hook", "eventTypes": ["order.confirmed"]}
    assert visitor_client.post("/v1.1/webhooks", body, format="json").status_code == 400


def test_an_address_refused_at_delivery_is_not_connected_to(httpserver, visitor_client, settings):
    httpserver.expect_request("/hook").respond_with_data("ok")
    subscribe(visitor_client, httpserver, "order.confirmed")
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = []  # as if the name now resolved to loopback
    day = MuseumDayFactory(date=days_from_today(10))
    visitor_client.post("/v1.1/orders", order_body(day.date), format="json")
    run_task_worker()

    assert httpserver.log == []
    assert "not public" in Delivery.objects.get().attempts_made.get().error


def test_webhooks_are_a_partners_own(visitor_client, online_client, httpserver):
    mine = subscribe(visitor_client, httpserver, "publishNewEvent")
    other = client_for(partner_member(username="other"))

    assert online_client.get("/v1.1/webhooks").status_code == 403  # no permission
    assert other.get("/v1.1/webhooks").json() == []
    assert other.get(f"/v1.1/webhooks/{mine['webhookId']}").status_code == 404
    assert other.delete(f"/v1.1/webhooks/{mine['webhookId']}").status_code == 404
    assert "secret" not in visitor_client.get(f"/v1.1/webhooks/{mine['webhookId']}").json()
    assert visitor_client.delete(f"/v1.1/webhooks/{mine['webhookId']}").status_code == 204
    assert not Subscription.objects.exists()


def test_a_rotated_secret_signs_with_both_during_the_overlap(httpserver, visitor_client):
    httpserver.expect_request("/hook").respond_with_data("ok")
    first = subscribe(visitor_client, httpserver, "order.confirmed")
    rotated = visitor_client.patch(
        f"/v1.1/webhooks/{first['webhookId']}", {"rotateSecret": True}, format="json"
    ).json()
    assert rotated["secret"] != first["secret"]
    day = MuseumDayFactory(date=days_from_today(10))
    visitor_client.post("/v1.1/orders", order_body(day.date), format="json")
    run_task_worker()

    assert len(received(httpserver, first["secret"])) == 1
    assert len(received(httpserver, rotated["secret"])) == 1


def test_slot_availability_is_coalesced(httpserver, visitor_client, settings):
    from hours.models import EntrySlot

    settings.MUSEUM_AVAILABILITY_WEBHOOK_SECONDS = 10
    httpserver.expect_request("/hook").respond_with_data("ok")
    secret = subscribe(visitor_client, httpserver, EventType.SLOT_AVAILABILITY_CHANGED)["secret"]
    day = MuseumDayFactory(date=days_from_today(10))
    EntrySlot.objects.create(day=day, entry_time=dt.time(10, 30), capacity=10)
    for _ in range(3):
        body = order_body(day.date, ("adult", 1), entryTime="10:30")
        assert visitor_client.post("/v1.1/orders", body, format="json").status_code == 201
    run_task_worker()

    messages = [body for _, body in received(httpserver, secret)]
    assert len(messages) == 1  # three sales, one message within the window
    assert messages[0]["data"]["available"] == 7  # what it is when sent


def test_a_check_in_reaches_the_receiver_as_the_tickets_order(httpserver, visitor, visitor_client):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    secret = subscribe(visitor_client, httpserver, "ticket.checked_in")["secret"]
    today = dt.date(2030, 6, 12)
    MuseumDayFactory(date=today)
    with time_machine.travel(timezone.make_aware(dt.datetime(2030, 6, 12, 11)), tick=False):
        order = visitor_client.post("/v1.1/orders", order_body(today), format="json").json()
        check_in(scanned=order["confirmationCode"], by=staff_member())
    run_task_worker()  # now: the receiver verifies the signature's time against its clock

    (_, body), *more = received(httpserver, secret)
    assert more == [] and body["type"] == "ticket.checked_in"
    assert body["data"]["orderId"] == order["orderId"]


def test_an_attempt_lost_with_its_worker_is_made_again_with_the_same_webhook_id(
    httpserver, visitor_client
):
    httpserver.expect_request("/hook").respond_with_data("ok")
    secret = subscribe(visitor_client, httpserver, "order.confirmed")["secret"]
    day = MuseumDayFactory(date=days_from_today(10))
    with time_machine.travel(timezone.now(), tick=False) as clock:
        visitor_client.post("/v1.1/orders", order_body(day.date), format="json")
        fan_out()
        delivery = Delivery.objects.get()
        # What a worker killed while sending leaves: its task running, the delivery claimed.
        [lost] = DBTaskResult.objects.filter(task_path=deliver_webhook.module_path)
        lost.claim("a-worker-that-died")
        assert claim_delivery(delivery_id=delivery.pk, attempt=1)

        assert requeue_lost() == 0  # perhaps still sending
        clock.shift(LOST_AFTER + dt.timedelta(seconds=1))
        assert requeue_lost() == 1
        clock.shift(RETRY.wait(1))
        run_task_worker()
        [(headers, _)] = received(httpserver, secret)  # signed at the clock's time

    assert headers["webhook-id"] == delivery.webhook_id
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (DeliveryState.DELIVERED, 2)
