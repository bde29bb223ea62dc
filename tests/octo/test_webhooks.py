"""OCTO's webhooks (`octo/webhooks`): subscribed through /octo/webhooks with a partner's key,
delivered by the webhooks app to a real receiver on loopback and verified with standardwebhooks."""

import pytest
from standardwebhooks.webhooks import Webhook

from tests.conftest import client_for, run_task_worker
from tests.factories import partner_member
from tests.octo.conftest import octo_client, reserve_body, uid
from webhooks.models import Delivery, Subscription

pytestmark = pytest.mark.django_db(transaction=True)  # on_commit and the task worker


@pytest.fixture(autouse=True)
def receivers_allowed(settings):
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MUSEUM_WEBHOOK_ALLOW_HTTP = True
    settings.MUSEUM_PUBLIC_URL = "https://museum.example"


def subscribe(octo, url: str, event: str) -> dict:
    answer = octo.post("/octo/webhooks", {"url": url, "event": event}, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()


def received(httpserver, path: str, secret: str) -> list[dict]:
    """The bodies the receiver got at `path`, each verified against the subscription's secret."""
    return [
        Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
        for request, _ in httpserver.log
        if request.path == path
    ]


def test_a_partner_hears_of_its_booking_and_of_the_places_left(httpserver, octo, timed_day):
    for path in ("/bookings", "/places", "/other"):
        httpserver.expect_request(path, method="POST").respond_with_data("ok")
    bookings = subscribe(octo, httpserver.url_for("/bookings"), "booking_update")
    places = subscribe(octo, httpserver.url_for("/places"), "availability_update")
    assert bookings["event"] == "booking_update" and bookings["secret"].startswith("whsec_")
    other = octo_client(partner_member(username="other-reseller"))
    subscribe(other, httpserver.url_for("/other"), "booking_update")

    octo.post(
        "/octo/bookings", reserve_body(timed_day.date, "adult", uuid=uid("w-1")), format="json"
    )
    run_task_worker()
    octo.post(f"/octo/bookings/{uid('w-1')}/confirm", {}, format="json")
    run_task_worker()

    updates = received(httpserver, "/bookings", bookings["secret"])
    assert {body["event"] for body in updates} == {"booking_update"}
    assert [body["booking"]["status"] for body in updates] == ["ON_HOLD", "CONFIRMED"]
    # The booking as GET /octo/bookings/{uuid} answers it; its links name the service's address.
    assert updates[-1]["booking"] == octo.get(f"/octo/bookings/{uid('w-1')}").json() | {
        "voucher": updates[-1]["booking"]["voucher"],
        "unitItems": updates[-1]["booking"]["unitItems"],
    }
    assert updates[-1]["booking"]["voucher"]["deliveryOptions"][1]["deliveryValue"].startswith(
        "https://museum.example/orders/tickets/"
    )
    (availability,) = received(httpserver, "/places", places["secret"])
    assert availability["event"] == "availability_update"
    assert availability["productId"] == "general"
    assert availability["localDate"] == timed_day.date.isoformat()
    assert [slot["vacancies"] for slot in availability["availabilities"]] == [3, 4, 4]
    # Another partner hears nothing of this partner's booking.
    assert not [request for request, _ in httpserver.log if request.path == "/other"]


def test_availability_update_is_coalesced_per_product_and_day(httpserver, octo, timed_day):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    places = subscribe(octo, httpserver.url_for("/hook"), "availability_update")

    for uuid, hour in ((uid("c-1"), 10), (uid("c-2"), 11)):
        body = reserve_body(timed_day.date, "adult", uuid=uuid, hour=hour)
        assert octo.post("/octo/bookings", body, format="json").status_code == 200
    run_task_worker()

    # Two sales that day: one message, saying both, read when it was sent.
    (availability,) = received(httpserver, "/hook", places["secret"])
    assert [slot["vacancies"] for slot in availability["availabilities"]] == [3, 4, 3]
    assert Delivery.objects.filter(event_type="availability_update").count() == 1


def test_webhooks_are_listed_and_deleted_by_their_partner_only(octo, httpserver):
    made = subscribe(octo, httpserver.url_for("/hook"), "booking_update")
    other = octo_client(partner_member(username="other-reseller"))
    subscribe(other, httpserver.url_for("/hook"), "availability_update")

    listed = octo.get("/octo/webhooks").json()
    assert listed == [
        {"id": made["id"], "event": "booking_update", "url": made["url"], "active": True}
    ]
    assert other.delete(f"/octo/webhooks/{made['id']}").status_code == 404
    assert octo.delete("/octo/webhooks/not-a-uuid").json()["error"] == "NOT_FOUND"
    assert octo.delete(f"/octo/webhooks/{made['id']}").status_code == 204
    assert octo.get("/octo/webhooks").json() == []
    assert Subscription.objects.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"url": "https://shop.example/hook", "event": "order.confirmed"},
        {"url": "https://127.0.0.2/hook", "event": "booking_update"},
        {"url": ["x"], "event": "booking_update"},
        {"event": "booking_update"},
    ],
)
def test_a_bad_webhook_is_a_bad_request_and_makes_nothing(octo, body):
    answer = octo.post("/octo/webhooks", body, format="json")
    assert answer.status_code == 400
    assert answer.json()["error"] == "BAD_REQUEST"
    assert not Subscription.objects.exists()


def test_each_api_shows_only_the_subscriptions_to_its_own_events(octo, partner, httpserver):
    # A client made from the Museum API's schema reads only the event types that schema names.
    museum = client_for(partner)
    octo_hook = subscribe(octo, httpserver.url_for("/octo"), "booking_update")
    museum_hook = museum.post(
        "/v1.1/webhooks",
        {"url": httpserver.url_for("/museum"), "eventTypes": ["order.confirmed"]},
        format="json",
    ).json()

    assert [hook["webhookId"] for hook in museum.get("/v1.1/webhooks").json()] == [
        museum_hook["webhookId"]
    ]
    assert [hook["id"] for hook in octo.get("/octo/webhooks").json()] == [octo_hook["id"]]
    for method in ("get", "patch", "delete"):
        answer = getattr(museum, method)(f"/v1.1/webhooks/{octo_hook['id']}", {}, format="json")
        assert answer.status_code == 404, method
    assert Subscription.objects.count() == 2
