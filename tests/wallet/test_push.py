"""Passes that stay true: a change of an order, once committed, rebuilds its tickets' passes on
the task queue and pushes each changed one to the devices registered for it, through a
stand-in for APNs on loopback (tests/wallet/apns.py) that keeps what it gets."""

import datetime as dt
import json
import uuid
import zipfile
from io import BytesIO

import jwt
import pytest
import time_machine
from django.core import checks as django_checks
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from django_walletpass.models import Registration
from rest_framework.test import APIClient

from hours.models import EntrySlot
from orders.models import Ticket
from orders.services.changes import change_contact, move_order
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory
from tests.orders.conftest import order_body
from tests.servers import free_port
from tests.wallet.conftest import APNS_KEY_ID, PASS_TYPE_ID, TEAM_ID
from wallet.models import ApplePass
from wallet.tasks import push_pass_update, refresh_passes

pytestmark = pytest.mark.django_db(transaction=True)  # on_commit and the task worker

SERVICE = "/wallet/apple/v1"
DEVICE = "b33e3a3dccb3030333e3333da33333a3"
PUSH_TOKEN = "a1" * 32


@pytest.fixture
def day(db):
    """A day three days ahead with entry slots at 10:00 and 14:00."""
    museum_day = MuseumDayFactory(
        date=timezone.localdate() + dt.timedelta(days=3),
        opens_at=dt.time(10),
        closes_at=dt.time(17),
    )
    for entry in (dt.time(10), dt.time(14)):
        EntrySlot.objects.create(day=museum_day, entry_time=entry, capacity=4)
    return museum_day


def buy(client, day, *lines) -> str:
    answer = client.post(
        "/v1.1/orders", order_body(day.date, *lines, entryTime="10:00"), format="json"
    )
    assert answer.status_code == 201, answer.content
    return answer.json()["orderId"]


@pytest.fixture
def order_id(visitor_client, day) -> str:
    return buy(visitor_client, day, ("adult", 2))


def tickets_of(order_id) -> list[Ticket]:
    return list(Ticket.objects.filter(order_id=order_id).order_by("pk"))


def serial(ticket) -> str:
    return f"ticket-{ticket.pk}"


def token_of(ticket) -> dict:
    pazz = ApplePass.objects.select_related("pazz").get(ticket=ticket).pazz
    return {"HTTP_AUTHORIZATION": f"ApplePass {pazz.authentication_token}"}


def in_wallet(client, ticket, *, push_token: str = PUSH_TOKEN) -> None:
    """The visitor downloads the ticket's pass and their device registers for its updates, as
    Apple's web service documents (docs/wallet.md)."""
    assert client.get(f"/v1.1/tickets/{ticket.pk}/wallet/apple").status_code == 200
    registered = APIClient().post(
        f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}/{serial(ticket)}",
        json.dumps({"pushToken": push_token}),
        content_type="application/json",
        **token_of(ticket),
    )
    assert registered.status_code == 201


def pass_json(pkpass: bytes) -> dict:
    with zipfile.ZipFile(BytesIO(pkpass)) as archive:
        return json.loads(archive.read("pass.json"))


def latest(ticket):
    return APIClient().get(f"{SERVICE}/passes/{PASS_TYPE_ID}/{serial(ticket)}", **token_of(ticket))


def updated_since(tag: str):
    return APIClient().get(
        f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}", {"passesUpdatedSince": tag}
    )


def enqueued(task) -> list[DBTaskResult]:
    return list(DBTaskResult.objects.filter(task_path=task.module_path))


def test_moving_the_order_pushes_once_to_the_device_and_its_pass_is_newer(
    apns, visitor_client, order_id, day, staff
):
    ticket = tickets_of(order_id)[0]
    in_wallet(visitor_client, ticket)
    run_task_worker()  # the sale's email: nothing of the wallet's
    tag = APIClient().get(f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}").json()
    assert apns.pushes == []

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=1)):
        move_order(order_id=order_id, by=staff, ticket_date=day.date, entry_time=dt.time(14))
        run_task_worker()
        updated = updated_since(tag["lastUpdated"])
        download = latest(ticket)

    [push] = apns.pushes
    assert push.device_token == PUSH_TOKEN
    assert push.topic == PASS_TYPE_ID
    assert json.loads(push.body) == {}
    # Made a minute ahead, in the travelled time: a leeway for the token's iat.
    claims = jwt.decode(
        push.jwt, apns.public_key, algorithms=["ES256"], leeway=dt.timedelta(minutes=5)
    )
    assert claims["iss"] == TEAM_ID and abs(claims["iat"] - timezone.now().timestamp()) < 3600
    assert jwt.get_unverified_header(push.jwt)["kid"] == APNS_KEY_ID
    assert updated.status_code == 200 and updated.json()["serialNumbers"] == [serial(ticket)]
    moved = dt.datetime.combine(day.date, dt.time(14), tzinfo=timezone.get_default_timezone())
    assert pass_json(download.content)["relevantDate"] == moved.isoformat()


def test_cancelling_a_ticket_voids_its_pass_and_pushes_it_alone(apns, visitor_client, order_id):
    cancelled, kept = tickets_of(order_id)
    in_wallet(visitor_client, cancelled)
    in_wallet(visitor_client, kept, push_token="b2" * 32)

    answer = visitor_client.post(f"/v1.1/orders/{order_id}/tickets/{cancelled.pk}/cancel")
    run_task_worker()

    assert answer.status_code == 200, answer.content
    assert [push.device_token for push in apns.pushes] == [PUSH_TOKEN]
    assert pass_json(latest(cancelled).content)["voided"] is True
    assert pass_json(latest(kept).content)["voided"] is False


def test_cancelling_the_order_voids_its_pass_and_pushes(apns, visitor_client, order_id):
    ticket = tickets_of(order_id)[0]
    in_wallet(visitor_client, ticket)

    assert visitor_client.post(f"/v1.1/orders/{order_id}/cancel").status_code == 200
    run_task_worker()

    assert [push.device_token for push in apns.pushes] == [PUSH_TOKEN]
    assert pass_json(latest(ticket).content)["voided"] is True


def test_a_device_apns_calls_unregistered_loses_its_registration(apns, visitor_client, order_id):
    ticket = tickets_of(order_id)[0]
    in_wallet(visitor_client, ticket)
    apns.status = 410

    visitor_client.post(f"/v1.1/orders/{order_id}/cancel")
    run_task_worker()

    assert len(apns.pushes) == 1
    assert not Registration.objects.exists()
    assert enqueued(push_pass_update) == []


@pytest.mark.parametrize("down", ["answering 503", "unreachable"])
def test_with_apns_down_the_push_is_enqueued_again_and_a_later_run_pushes(
    down, apns, settings, visitor_client, order_id
):
    ticket = tickets_of(order_id)[0]
    in_wallet(visitor_client, ticket)
    if down == "unreachable":
        settings.MUSEUM_WALLET_APPLE_APNS_URL = f"https://127.0.0.1:{free_port()}"
    else:
        apns.status = 503

    cancelled = visitor_client.post(f"/v1.1/orders/{order_id}/cancel")
    run_task_worker()
    [retry] = enqueued(push_pass_update)
    apns.status, settings.MUSEUM_WALLET_APPLE_APNS_URL = 200, apns.url
    run_task_worker()  # not due yet: RETRY's first wait
    before_due = len(apns.pushes)
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=2)):
        run_task_worker()

    assert cancelled.status_code == 200  # the sale never waits for APNs
    assert retry.args_kwargs["kwargs"]["attempt"] == 2
    assert retry.args_kwargs["kwargs"]["push_tokens"] == [PUSH_TOKEN]
    assert before_due == (1 if down == "answering 503" else 0)
    assert apns.pushes[-1].device_token == PUSH_TOKEN and len(apns.pushes) == before_due + 1
    assert Registration.objects.filter(push_token=PUSH_TOKEN).exists()
    assert len(enqueued(push_pass_update)) == 1  # pushed: nothing more


def test_a_sale_without_passes_enqueues_nothing_for_the_wallet(
    apns, visitor_client, order_id, day, staff
):
    move_order(order_id=order_id, by=staff, ticket_date=day.date, entry_time=dt.time(14))
    visitor_client.post(f"/v1.1/orders/{order_id}/cancel")
    run_task_worker()

    assert enqueued(refresh_passes) == [] and enqueued(push_pass_update) == []
    assert apns.pushes == []


def test_a_change_the_pass_does_not_show_pushes_nothing(apns, visitor_client, order_id, staff):
    ticket = tickets_of(order_id)[0]
    in_wallet(visitor_client, ticket)

    change_contact(
        order_id=uuid.UUID(order_id), by=staff, email="other@example.com", name="Ada", phone=""
    )
    run_task_worker()

    assert len(enqueued(refresh_passes)) == 1  # looked at: the pass is the same
    assert apns.pushes == []


@pytest.fixture
def scraper(settings, anonymous_client):
    """The metrics scraper, who reads /readyz's details."""
    settings.MUSEUM_METRICS_TOKEN = "scrape-token-for-tests"
    anonymous_client.credentials(HTTP_AUTHORIZATION="Bearer scrape-token-for-tests")
    return anonymous_client


def apns_warnings() -> list[str]:
    return [m.msg for m in django_checks.run_checks() if m.id == "wallet.W003"]


def test_an_apns_key_without_its_id_is_warned_of_and_told_at_readyz(apns, settings, scraper):
    settings.MUSEUM_WALLET_APPLE_APNS_KEY_ID = ""

    assert apns_warnings() == ["Apple Wallet pushes: missing MUSEUM_WALLET_APPLE_APNS_KEY_ID."]
    assert scraper.get("/readyz").json()["wallet_apple_push"] == (
        "missing MUSEUM_WALLET_APPLE_APNS_KEY_ID"
    )


def test_an_apns_key_file_that_is_no_key_is_warned_of(apns, settings, tmp_path, scraper):
    not_a_key = tmp_path / "AuthKey.p8"
    not_a_key.write_text("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    settings.MUSEUM_WALLET_APPLE_APNS_KEY = str(not_a_key)

    assert apns_warnings() == ["Apple Wallet pushes: APNs key unreadable."]


def test_the_apns_key_set_up_is_ok_and_none_is_not_configured(apns, settings, scraper):
    assert apns_warnings() == []
    assert scraper.get("/readyz").json()["wallet_apple_push"] == "ok"

    settings.MUSEUM_WALLET_APPLE_APNS_KEY = settings.MUSEUM_WALLET_APPLE_APNS_KEY_ID = ""

    assert apns_warnings() == []
    assert scraper.get("/readyz").json()["wallet_apple_push"] == "not configured"
