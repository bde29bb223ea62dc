"""Google Wallet save links for tickets, against a stand-in for Google on loopback
(tests/wallet/google_fake.py) with a service account's key made at test time."""

import datetime as dt
import socket
import uuid

import pytest
import time_machine
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from hours.models import EntrySlot
from orders import tokens
from orders.models import OrderStatus, Ticket
from orders.services.changes import move_order
from tests.conftest import assert_problem, client_for, run_task_worker
from tests.factories import (
    MuseumDayFactory,
    SpecialEventFactory,
    TicketFactory,
    UserFactory,
    days_from_today,
)
from tests.orders.conftest import order_body
from tests.tickets.test_every_face_agrees import NOW, ORDERS, TODAY
from tests.wallet.conftest import ISSUER, LONGEST_LINK, claims_of
from tests.wallet.google_fake import API_PATH
from wallet.google import EVENT_TICKET, SAVE_URL, wallet_client
from wallet.models import GoogleObject
from wallet.tasks import refresh_passes, update_google_object


@pytest.fixture
def ticket(visitor):
    day = MuseumDayFactory(date=days_from_today(3))
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10, 30), capacity=10)
    return TicketFactory(buyer=visitor, date=day.date, slot=slot, order__slot=slot)


def link_url(ticket_or_id) -> str:
    return f"/v1.1/tickets/{getattr(ticket_or_id, 'pk', ticket_or_id)}/wallet/google"


def object_id(ticket) -> str:
    return f"{ISSUER}.ticket-{ticket.pk}"


def test_the_save_link_is_signed_by_the_service_account_and_names_only_the_saved_object(
    google, visitor_client, ticket
):
    response = visitor_client.get(link_url(ticket))

    assert response.status_code == 200
    save_url = response.json()["saveUrl"]
    assert save_url.startswith(SAVE_URL) and len(save_url) < LONGEST_LINK
    claims = claims_of(save_url, google)
    assert claims["iss"] == google.account.key_json["client_email"]
    assert claims["typ"] == "savetowallet"
    assert claims["origins"] == ["https://tickets.museum.example"]
    assert claims["payload"] == {
        "eventTicketObjects": [{"id": object_id(ticket), "classId": f"{ISSUER}.general-entry"}]
    }
    assert object_id(ticket) in google.objects


def test_the_saved_object_carries_the_doors_token_and_the_slots_start(
    google, visitor_client, ticket
):
    visitor_client.get(link_url(ticket))

    saved = google.objects[object_id(ticket)]
    assert saved["classId"] in google.classes
    assert saved["state"] == "ACTIVE"
    assert saved["barcode"]["type"] == "QR_CODE"
    claim = tokens.verify_ticket_token(saved["barcode"]["value"])
    assert (claim.ticket_id, claim.date) == (ticket.pk, ticket.date)
    start = timezone.make_aware(dt.datetime.combine(ticket.date, dt.time(10, 30)))
    assert saved["validTimeInterval"]["start"]["date"] == start.isoformat()
    assert start.isoformat().endswith(("+01:00", "+02:00"))
    headers = {module["id"]: module["header"] for module in saved["textModulesData"]}
    assert headers["code"] == "Order"


def test_the_class_is_named_in_every_offered_language(google, visitor_client, visitor):
    event = SpecialEventFactory(
        name="Night at the museum", name_de="Nacht im Museum", dates=[days_from_today(3)]
    )
    ticket = TicketFactory(buyer=visitor, ticket_type="event", event=event, date=days_from_today(3))

    visitor_client.get(link_url(ticket))

    name = google.classes[f"{ISSUER}.event-{event.pk}"]["eventName"]
    assert name["defaultValue"] == {"language": "en", "value": "Night at the museum"}
    translated = {each["language"]: each["value"] for each in name["translatedValues"]}
    assert set(translated) == {"de", "fr", "nl", "es"}
    assert translated["de"] == "Nacht im Museum"
    # A language without the event's name in it reads the museum's.
    assert translated["fr"] == "Night at the museum"


def test_asking_again_updates_the_object_to_what_the_ticket_shows_now(
    google, visitor_client, ticket
):
    assert visitor_client.get(link_url(ticket)).status_code == 200
    type(ticket).objects.filter(pk=ticket.pk).update(cancelled_at=timezone.now())

    again = visitor_client.get(link_url(ticket))

    assert again.status_code == 200
    assert google.objects[object_id(ticket)]["state"] == "INACTIVE"
    assert google.calls.count(("PUT", "eventTicketObject")) == 1
    # The class is inserted once; this process remembers it is there.
    assert google.calls.count(("POST", "eventTicketClass")) == 1


def test_the_client_reads_back_what_google_holds(google, visitor_client, ticket):
    visitor_client.get(link_url(ticket))

    client = wallet_client()

    assert client.read_object(EVENT_TICKET, object_id(ticket)) == google.objects[object_id(ticket)]
    assert client.read_object(EVENT_TICKET, f"{ISSUER}.ticket-{uuid.uuid4()}") is None


def test_a_browser_is_redirected_to_the_save_link(google, visitor_client, ticket):
    response = visitor_client.get(
        link_url(ticket), HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8"
    )

    assert response.status_code == 302
    assert response["Location"].startswith(SAVE_URL)
    assert claims_of(response["Location"], google)["payload"]["eventTicketObjects"][0][
        "id"
    ] == object_id(ticket)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    "failure",
    ["errors", "refused", "unreachable", "key missing", "key not JSON", "key a list", "key empty"],
)
def test_google_failing_is_a_503_wallet_unavailable_with_retry_after(
    google, visitor_client, ticket, settings, tmp_path, caplog, failure
):
    if failure == "errors":
        google.down = True
    elif failure == "refused":
        google.refusal = "Invalid barcode value."
    elif failure == "unreachable":
        settings.MUSEUM_WALLET_GOOGLE_API_URL = f"http://127.0.0.1:{closed_port()}{API_PATH}"
    else:
        # The operator's mistake, told in the log; the visitor is told to come back.
        broken = tmp_path / "broken.json"
        contents = {"key not JSON": "PRIVATE KEY", "key a list": "[]", "key empty": "{}"}
        if failure in contents:
            broken.write_text(contents[failure])
        settings.MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT = str(broken)

    response = visitor_client.get(link_url(ticket))

    assert assert_problem(response, 503)["code"] == "wallet_unavailable"
    assert int(response["Retry-After"]) > 0
    if failure == "refused":
        # What Google refused is the operator's to read.
        assert "answered 400 Invalid barcode value." in caplog.text


def test_staff_get_any_tickets_link_and_other_visitors_nothing(google, staff_client, ticket):
    stranger = client_for(UserFactory(username="stranger"))

    assert staff_client.get(link_url(ticket)).status_code == 200
    assert assert_problem(stranger.get(link_url(ticket)), 404)["code"] == "not_found"
    assert assert_problem(stranger.get(link_url(uuid.uuid4())), 404)["code"] == "not_found"
    assert not google.objects.keys() - {object_id(ticket)}


def test_an_unpaid_orders_ticket_has_no_pass(google, visitor_client, visitor):
    ticket = TicketFactory(
        buyer=visitor,
        date=days_from_today(3),
        order__status=OrderStatus.HELD,
        order__confirmed_at=None,
        order__hold_expires_at=timezone.now() + dt.timedelta(minutes=10),
    )

    response = visitor_client.get(link_url(ticket))

    assert assert_problem(response, 409)["code"] == "not_paid"
    assert google.calls == []


def test_signing_in_is_needed(google, anonymous_client, ticket):
    assert_problem(anonymous_client.get(link_url(ticket)), 401)


@pytest.mark.parametrize("missing", ["issuer", "key"])
def test_a_museum_without_google_wallet_answers_404_wallet_not_configured(
    google, visitor_client, ticket, settings, missing
):
    if missing == "issuer":
        settings.MUSEUM_WALLET_GOOGLE_ISSUER_ID = ""
    else:
        settings.MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT = ""

    for ticket_id in (ticket.pk, uuid.uuid4()):
        response = visitor_client.get(link_url(ticket_id))
        assert assert_problem(response, 404)["code"] == "wallet_not_configured"
    assert google.calls == []


def test_the_object_speaks_its_orders_language(google, visitor_client, visitor):
    ticket = TicketFactory(buyer=visitor, date=days_from_today(3), order__language="de")

    visitor_client.get(link_url(ticket), HTTP_ACCEPT_LANGUAGE="fr")

    headers = {m["id"]: m["header"] for m in google.objects[object_id(ticket)]["textModulesData"]}
    assert headers["date"] == "Datum"


@pytest.mark.parametrize("state", list(ORDERS))
def test_the_link_is_given_for_exactly_the_orders_whose_qr_image_is(state, google, staff_client):
    """One rule for the ticket's image and its passes (tickets.selectors.viewable_ticket), asked
    the orders tests/tickets/test_every_face_agrees.py asks every face."""
    MuseumDayFactory(date=TODAY)
    order = ORDERS[state]()
    ticket = order.tickets.order_by("confirmation_code").first()
    assert ticket is not None

    with time_machine.travel(NOW, tick=False):
        image = staff_client.get(f"/v1.1/tickets/{ticket.pk}/qr")
        link = staff_client.get(link_url(ticket))

    assert link.status_code == image.status_code
    if image.status_code == 200:
        state_at_google = google.objects[object_id(ticket)]["state"]
        assert state_at_google == ("INACTIVE" if state == "paid, then cancelled" else "ACTIVE")
    else:
        assert link.json()["code"] == image.json()["code"] == "not_paid"
        assert google.objects == {}


# Updates on change: the object saved again on the task queue (wallet/tasks.py)

on_the_queue = pytest.mark.django_db(transaction=True)  # on_commit and the task worker


@pytest.fixture
def paid_ticket(google, visitor_client):
    """A ticket of a paid order for a day with entry at 10:00 and 14:00."""
    day = MuseumDayFactory(date=days_from_today(3), opens_at=dt.time(10), closes_at=dt.time(17))
    for entry in (dt.time(10), dt.time(14)):
        EntrySlot.objects.create(day=day, entry_time=entry, capacity=4)
    body = order_body(day.date, ("adult", 1), entryTime="10:00")
    order = visitor_client.post("/v1.1/orders", body, format="json").json()
    return Ticket.objects.get(order_id=order["orderId"])


@pytest.fixture
def saved_ticket(paid_ticket, visitor_client):
    """The paid ticket, which its visitor added to Google Wallet (its object saved and kept)."""
    assert visitor_client.get(link_url(paid_ticket)).status_code == 200
    assert GoogleObject.objects.filter(
        ticket=paid_ticket, object_id=object_id(paid_ticket)
    ).exists()
    return paid_ticket


def starts_at(saved: dict) -> str:
    return saved["validTimeInterval"]["start"]["date"]


@on_the_queue
def test_a_moved_orders_object_is_updated_in_google(google, saved_ticket, staff):
    before = google.objects[object_id(saved_ticket)]

    move_order(
        order_id=saved_ticket.order_id,
        by=staff,
        ticket_date=saved_ticket.date,
        entry_time=dt.time(14),
    )
    run_task_worker()

    after = google.objects[object_id(saved_ticket)]
    moved = timezone.make_aware(dt.datetime.combine(saved_ticket.date, dt.time(14)))
    assert starts_at(before) != starts_at(after) == moved.isoformat()
    assert after["state"] == "ACTIVE"


@on_the_queue
def test_a_cancelled_tickets_object_is_inactive_in_google(google, saved_ticket, visitor_client):
    cancelled = visitor_client.post(f"/v1.1/orders/{saved_ticket.order_id}/cancel")
    run_task_worker()

    assert cancelled.status_code == 200, cancelled.content
    assert google.objects[object_id(saved_ticket)]["state"] == "INACTIVE"


@on_the_queue
def test_with_google_down_the_update_is_enqueued_again_and_a_later_run_saves_it(
    google, saved_ticket, visitor_client
):
    google.down = True

    cancelled = visitor_client.post(f"/v1.1/orders/{saved_ticket.order_id}/cancel")
    run_task_worker()
    [retry] = DBTaskResult.objects.filter(task_path=update_google_object.module_path)
    google.down = False
    run_task_worker()  # not due yet: RETRY's first wait
    before_due = google.objects[object_id(saved_ticket)]["state"]
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=2)):
        run_task_worker()

    assert cancelled.status_code == 200  # the sale never waits for Google
    assert retry.args_kwargs["kwargs"] == {"object_id": object_id(saved_ticket), "attempt": 2}
    assert retry.run_after > retry.enqueued_at
    assert before_due == "ACTIVE"
    assert google.objects[object_id(saved_ticket)]["state"] == "INACTIVE"
    assert DBTaskResult.objects.filter(task_path=update_google_object.module_path).count() == 1


@on_the_queue
def test_an_object_google_refuses_is_given_up(google, saved_ticket, visitor_client, caplog):
    google.refusal = "Invalid barcode value."

    visitor_client.post(f"/v1.1/orders/{saved_ticket.order_id}/cancel")
    run_task_worker()

    assert google.objects[object_id(saved_ticket)]["state"] == "ACTIVE"
    assert not DBTaskResult.objects.filter(task_path=update_google_object.module_path).exists()
    assert f"Google Wallet object {object_id(saved_ticket)} refused" in caplog.text


@on_the_queue
def test_without_google_set_up_nothing_is_enqueued(google, saved_ticket, visitor_client, settings):
    settings.MUSEUM_WALLET_GOOGLE_ISSUER_ID = ""

    visitor_client.post(f"/v1.1/orders/{saved_ticket.order_id}/cancel")

    assert not DBTaskResult.objects.filter(task_path=refresh_passes.module_path).exists()


@on_the_queue
def test_a_ticket_never_saved_in_google_enqueues_nothing(google, paid_ticket, visitor_client):
    visitor_client.post(f"/v1.1/orders/{paid_ticket.order_id}/cancel")

    assert not DBTaskResult.objects.filter(task_path=refresh_passes.module_path).exists()
    assert google.calls == []
