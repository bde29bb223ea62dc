"""Apple Wallet passes of tickets: the .pkpass through the API, signed by the test's own
authority (tests/wallet/conftest.py), and Apple's web service through its documented paths."""

import datetime as dt
import hashlib
import json
import logging
import os
import subprocess
import sys
import uuid
import zipfile
from io import BytesIO

import pytest
import time_machine
from django.utils import timezone
from django.utils.http import http_date
from django_walletpass.models import Log, Registration
from rest_framework.test import APIClient

from hours.models import EntrySlot
from orders import tokens
from orders.models import OrderStatus, Ticket
from orders.services.cancellation import cancel_order
from orders.services.changes import move_order
from tests.conftest import assert_problem, client_for
from tests.factories import MuseumDayFactory, TicketFactory, UserFactory
from tests.tickets.test_every_face_agrees import NOW, ORDERS, TODAY
from tests.wallet.conftest import PASS_TYPE_ID, TEAM_ID
from wallet.models import ApplePass

CHECK_IN = "/v1.1/tickets/check-in"
PKPASS = "application/vnd.apple.pkpass"
SERVICE = "/wallet/apple/v1"
DEVICE = "b33e3a3dccb3030333e3333da33333a3"


def pass_url(ticket) -> str:
    return f"/v1.1/tickets/{ticket.pk}/wallet/apple"


def unzipped(pkpass: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(BytesIO(pkpass)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def pass_json(pkpass: bytes) -> dict:
    return json.loads(unzipped(pkpass)["pass.json"])


@pytest.fixture
def ticket(visitor_client):
    """A general ticket `visitor` bought (paid on account) for the day after tomorrow."""
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2)).date
    body = {"ticketType": "general", "ticketDate": day.isoformat(), "email": "ada@example.com"}
    bought = visitor_client.post("/v1.1/tickets", body, format="json")
    return Ticket.objects.get(pk=bought.json()["ticketId"])


@pytest.fixture
def downloaded(apple_wallet, visitor_client, ticket):
    response = visitor_client.get(pass_url(ticket))
    assert response.status_code == 200, response.content
    return response


def apple(ticket) -> ApplePass:
    return ApplePass.objects.select_related("pazz").get(ticket=ticket)


def authorised(ticket) -> dict:
    return {"HTTP_AUTHORIZATION": f"ApplePass {apple(ticket).pazz.authentication_token}"}


def registration_url(ticket, device: str = DEVICE) -> str:
    return f"{SERVICE}/devices/{device}/registrations/{PASS_TYPE_ID}/ticket-{ticket.pk}"


def latest_url(ticket) -> str:
    return f"{SERVICE}/passes/{PASS_TYPE_ID}/ticket-{ticket.pk}"


# The pass


def test_the_pass_is_a_zip_whose_manifest_hashes_every_file(downloaded):
    assert downloaded["Content-Type"] == PKPASS
    files = unzipped(downloaded.content)
    manifest = json.loads(files.pop("manifest.json"))
    signature = files.pop("signature")

    assert signature
    assert {"pass.json", "icon.png", "icon@2x.png", "logo.png"} <= set(files)
    assert manifest == {name: hashlib.sha1(content).hexdigest() for name, content in files.items()}


@pytest.mark.needs_tool("openssl")
def test_the_signature_verifies_with_openssl_against_the_test_authority(
    apple_wallet, downloaded, tmp_path
):
    files = unzipped(downloaded.content)
    (tmp_path / "signature").write_bytes(files["signature"])
    (tmp_path / "manifest.json").write_bytes(files["manifest.json"])

    verified = subprocess.run(
        [
            "openssl", "smime", "-verify", "-binary", "-inform", "DER",
            "-in", "signature", "-content", "manifest.json",
            "-CAfile", str(apple_wallet.ca), "-purpose", "any",
            "-out", "/dev/null",
        ],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip

    assert verified.returncode == 0, verified.stderr
    assert "Verification successful" in verified.stderr


def test_pass_json_names_the_museum_the_pass_type_and_the_tickets_token(downloaded, ticket):
    body = pass_json(downloaded.content)

    assert body["passTypeIdentifier"] == PASS_TYPE_ID and body["teamIdentifier"] == TEAM_ID
    assert body["serialNumber"] == f"ticket-{ticket.pk}"
    assert body["barcodes"] == [
        {
            "format": "PKBarcodeFormatQR",
            "message": tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date),
            "messageEncoding": "iso-8859-1",
        }
    ]
    assert body["webServiceURL"].endswith("/wallet/apple")
    # The pass's own token, random, never the QR secret.
    assert len(body["authenticationToken"]) >= 16
    assert body["authenticationToken"] not in body["barcodes"][0]["message"]
    assert body["voided"] is False
    assert body["eventTicket"]["primaryFields"][0]["value"] == "General entry"


def test_the_slots_start_with_its_offset_is_the_relevant_date(
    settings, apple_wallet, visitor, visitor_client
):
    settings.TIME_ZONE = "Europe/Amsterdam"
    day = MuseumDayFactory(date=dt.date(2030, 7, 1))
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10, 30))
    ticket = TicketFactory(buyer=visitor, date=day.date, slot=slot)

    body = pass_json(visitor_client.get(pass_url(ticket)).content)

    # Summer time in Amsterdam: two hours ahead of UTC.
    assert body["relevantDate"] == "2030-07-01T10:30:00+02:00"
    assert body["expirationDate"] == "2030-07-02T00:00:00+02:00"
    fields = {field["key"]: field for field in body["eventTicket"]["secondaryFields"]}
    assert fields["time"]["value"] == "from 10:30"


def test_the_pass_speaks_its_orders_language(apple_wallet, visitor, visitor_client):
    ticket = TicketFactory(buyer=visitor, date=dt.date(2030, 1, 1))
    ticket.order.language = "de"
    ticket.order.save(update_fields=["language"])

    body = pass_json(visitor_client.get(pass_url(ticket)).content)

    labels = {f["key"]: f["label"] for f in body["eventTicket"]["secondaryFields"]}
    assert labels["date"] == "Datum"
    assert body["eventTicket"]["primaryFields"][0]["value"] != "General entry"


def test_the_passs_barcode_is_admitted_at_the_door_once(
    apple_wallet, visitor, visitor_client, staff_client
):
    ticket = TicketFactory(buyer=visitor, date=timezone.localdate())
    token = pass_json(visitor_client.get(pass_url(ticket)).content)["barcodes"][0]["message"]

    first = staff_client.post(CHECK_IN, {"code": token}, format="json")
    second = staff_client.post(CHECK_IN, {"code": token}, format="json")

    assert first.status_code == 200 and first.json()["ticketId"] == str(ticket.pk)
    assert second.status_code == 409 and second.json()["reason"] == "already_checked_in"


def test_the_pass_is_kept_and_revalidates_with_if_modified_since(downloaded, visitor_client):
    ticket_url = downloaded.wsgi_request.path

    again = visitor_client.get(ticket_url)
    unchanged = visitor_client.get(ticket_url, HTTP_IF_MODIFIED_SINCE=downloaded["Last-Modified"])
    same = visitor_client.get(ticket_url, HTTP_IF_NONE_MATCH=downloaded["ETag"])

    assert again.content == downloaded.content
    assert unchanged.status_code == 304 and same.status_code == 304
    assert ApplePass.objects.count() == 1


# Who may have it


def test_staff_get_any_tickets_pass_and_other_visitors_a_404(apple_wallet, ticket, staff_client):
    stranger = client_for(UserFactory(username="stranger"))

    assert staff_client.get(pass_url(ticket)).status_code == 200
    assert_problem(stranger.get(pass_url(ticket), HTTP_ACCEPT=PKPASS), 404)


def test_without_credentials_the_answer_is_401(apple_wallet, ticket):
    assert_problem(APIClient().get(pass_url(ticket)), 401)


@pytest.mark.parametrize("ticket_id", [uuid.uuid4(), uuid.UUID(int=0)])
def test_an_unknown_ticket_is_a_404(apple_wallet, visitor_client, ticket_id):
    assert_problem(visitor_client.get(f"/v1.1/tickets/{ticket_id}/wallet/apple"), 404)


def test_an_unpaid_orders_ticket_has_no_pass(apple_wallet, visitor, visitor_client):
    ticket = TicketFactory(
        buyer=visitor,
        held=True,
        order__status=OrderStatus.HELD,
        order__confirmed_at=None,
        order__hold_expires_at=timezone.now() + dt.timedelta(minutes=10),
    )

    problem = assert_problem(visitor_client.get(pass_url(ticket)), 409)

    assert problem["code"] == "not_paid"
    assert not ApplePass.objects.exists()


def test_without_the_apple_settings_the_pass_is_not_configured(settings, visitor_client, ticket):
    settings.MUSEUM_WALLET_APPLE_CERTIFICATE = ""

    problem = assert_problem(visitor_client.get(pass_url(ticket)), 404)

    assert problem["code"] == "wallet_not_configured"


def test_a_key_that_cannot_sign_is_a_503_not_a_500(
    apple_wallet, settings, visitor_client, ticket, caplog
):
    # Set up with the test authority, then the key's password changed under the running
    # service: the first pass built after it cannot be signed.
    settings.MUSEUM_WALLET_APPLE_KEY_PASSWORD = "wrong horse"
    settings.WALLETPASS = {**settings.WALLETPASS, "KEY_PASSWORD": b"wrong horse"}

    response = visitor_client.get(pass_url(ticket))

    assert response.status_code == 503
    assert response.json()["code"] == "wallet_unavailable"
    assert response["Retry-After"]
    assert not ApplePass.objects.exists()
    assert "MUSEUM_WALLET_APPLE_KEY_PASSWORD wrong" in caplog.text


# Apple's web service


def register(ticket, headers: dict, *, device: str = DEVICE):
    return APIClient().post(
        registration_url(ticket, device),
        json.dumps({"pushToken": "f" * 64}),
        content_type="application/json",
        **headers,
    )


def test_a_device_registers_once_and_is_told_so_again(downloaded, ticket):
    first = register(ticket, authorised(ticket))
    again = register(ticket, authorised(ticket))

    assert (first.status_code, again.status_code) == (201, 200)
    assert Registration.objects.get().device_library_identifier == DEVICE


def test_a_wrong_token_and_an_unknown_pass_are_the_same_401(downloaded, ticket):
    wrong = register(ticket, {"HTTP_AUTHORIZATION": "ApplePass not-the-token"})
    unknown = APIClient().post(
        f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}/ticket-{uuid.uuid4()}",
        json.dumps({"pushToken": "f" * 64}),
        content_type="application/json",
        **authorised(ticket),
    )
    download = APIClient().get(latest_url(ticket), HTTP_AUTHORIZATION="ApplePass nope")
    unregister = APIClient().delete(registration_url(ticket))

    assert {r.status_code for r in (wrong, unknown, download, unregister)} == {401}
    assert wrong.content == unknown.content
    assert not Registration.objects.exists()


def test_a_registration_without_a_push_token_is_a_400(downloaded, ticket):
    response = APIClient().post(
        registration_url(ticket), "not json", content_type="application/json", **authorised(ticket)
    )

    assert response.status_code == 400


def test_a_device_unregisters(downloaded, ticket):
    register(ticket, authorised(ticket))

    response = APIClient().delete(registration_url(ticket), **authorised(ticket))

    assert response.status_code == 200
    assert not Registration.objects.exists()


def test_the_download_has_last_modified_and_if_modified_since_answers_304(downloaded, ticket):
    response = APIClient().get(latest_url(ticket), **authorised(ticket))
    unchanged = APIClient().get(
        latest_url(ticket), HTTP_IF_MODIFIED_SINCE=response["Last-Modified"], **authorised(ticket)
    )

    assert response.status_code == 200 and response["Content-Type"] == PKPASS
    assert response["Last-Modified"] == http_date(apple(ticket).pazz.updated_at.timestamp())
    assert pass_json(response.content)["serialNumber"] == f"ticket-{ticket.pk}"
    assert unchanged.status_code == 304


def test_a_moved_order_lists_the_pass_as_updated_and_its_download_is_newer(
    downloaded, ticket, staff
):
    register(ticket, authorised(ticket))
    listed = APIClient().get(f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}")
    tag = listed.json()["lastUpdated"]
    before = APIClient().get(latest_url(ticket), **authorised(ticket))
    nothing_new = APIClient().get(
        f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}",
        {"passesUpdatedSince": tag},
    )

    MuseumDayFactory(date=ticket.date + dt.timedelta(days=1))
    # A minute later: Last-Modified counts whole seconds.
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=1)):
        move_order(
            order_id=ticket.order_id, by=staff, ticket_date=ticket.date + dt.timedelta(days=1)
        )
        updated = APIClient().get(
            f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}",
            {"passesUpdatedSince": tag},
        )
        after = APIClient().get(
            latest_url(ticket),
            HTTP_IF_MODIFIED_SINCE=before["Last-Modified"],
            **authorised(ticket),
        )

    assert listed.json()["serialNumbers"] == [f"ticket-{ticket.pk}"]
    assert nothing_new.status_code == 204
    assert updated.status_code == 200
    assert updated.json()["serialNumbers"] == [f"ticket-{ticket.pk}"]
    assert updated.json()["lastUpdated"] > tag
    moved = pass_json(after.content)
    assert after.status_code == 200
    assert moved["barcodes"][0]["message"] != pass_json(before.content)["barcodes"][0]["message"]


def test_a_cancelled_tickets_pass_is_voided(downloaded, ticket, staff):
    cancel_order(order_id=ticket.order_id, by=staff)

    response = APIClient().get(latest_url(ticket), **authorised(ticket))

    assert pass_json(response.content)["voided"] is True


def test_an_unreadable_passes_updated_since_is_a_400(downloaded, ticket):
    register(ticket, authorised(ticket))

    response = APIClient().get(
        f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}",
        {"passesUpdatedSince": "yesterday-ish"},
    )

    assert response.status_code == 400


def test_a_device_without_passes_is_told_there_is_nothing(apple_wallet, db):
    response = APIClient().get(f"{SERVICE}/devices/{DEVICE}/registrations/{PASS_TYPE_ID}")

    assert response.status_code == 204


def test_a_devices_log_goes_to_our_log_and_not_the_database(apple_wallet, db, caplog):
    messages = [f"[2030-01-01] Get pass task ({n}): \x00failed" for n in range(20)]

    with caplog.at_level(logging.INFO, logger="wallet.apple"):
        response = APIClient().post(
            f"{SERVICE}/log", json.dumps({"logs": messages}), content_type="application/json"
        )

    assert response.status_code == 200
    assert not Log.objects.exists()
    logged = [record for record in caplog.records if record.name == "wallet.apple"]
    assert len(logged) == 10
    assert "\x00" not in logged[0].getMessage()


def test_registrations_are_rate_limited_per_address(settings, downloaded, ticket):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "wallet_registration": "2/min",
        },
    }

    answers = [register(ticket, authorised(ticket), device=f"device{n}") for n in range(3)]

    assert [answer.status_code for answer in answers] == [201, 201, 429]


@pytest.mark.parametrize("state", list(ORDERS))
def test_the_pass_is_given_for_exactly_the_orders_whose_qr_image_is(
    state, apple_wallet, staff_client
):
    """One rule for the ticket's image and its pass (tickets.selectors.viewable_ticket), asked
    the orders tests/tickets/test_every_face_agrees.py asks every face."""
    MuseumDayFactory(date=TODAY)
    order = ORDERS[state]()
    ticket = order.tickets.order_by("confirmation_code").first()
    assert ticket is not None

    with time_machine.travel(NOW, tick=False):
        image = staff_client.get(f"/v1.1/tickets/{ticket.pk}/qr")
        wallet = staff_client.get(pass_url(ticket))

    assert wallet.status_code == image.status_code
    if image.status_code == 200:
        assert pass_json(wallet.content)["voided"] == (state == "paid, then cancelled")
    else:
        assert wallet.json()["code"] == image.json()["code"] == "not_paid"


NUL = "%00"


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("post", f"/devices/{NUL}/registrations/{PASS_TYPE_ID}/SERIAL", {"pushToken": "f"}, 400),
        (
            "post",
            f"/devices/{'d' * 151}/registrations/{PASS_TYPE_ID}/SERIAL",
            {"pushToken": "f"},
            400,
        ),
        ("post", f"/devices/{DEVICE}/registrations/{PASS_TYPE_ID}/SERIAL", [], 400),
        ("post", f"/devices/{DEVICE}/registrations/{PASS_TYPE_ID}/SERIAL", {"pushToken": 7}, 400),
        ("post", f"/devices/{DEVICE}/registrations/{PASS_TYPE_ID}/ticket-{NUL}", None, 401),
        ("post", f"/devices/{DEVICE}/registrations/{NUL}/SERIAL", None, 401),
        ("delete", f"/devices/{NUL}/registrations/{PASS_TYPE_ID}/SERIAL", None, 400),
        ("get", f"/devices/{NUL}/registrations/{PASS_TYPE_ID}", None, 400),
        (
            "get",
            f"/devices/{DEVICE}/registrations/{PASS_TYPE_ID}?passesUpdatedSince={NUL}",
            None,
            400,
        ),
        ("get", f"/passes/{PASS_TYPE_ID}/{NUL}", None, 401),
        ("get", f"/passes/{PASS_TYPE_ID}/{'s' * 10_000}", None, 401),
        ("post", "/log", {"logs": "not a list"}, 400),
        ("post", "/log", [], 400),
    ],
)
def test_hostile_requests_to_the_web_service_are_refused_not_failed(
    downloaded, ticket, method, path, body, expected
):
    """A 4xx, never a 500 (the test client raises a view's exception); on PostgreSQL a NUL
    would reach the database's text and fail there."""
    path = path.replace("SERIAL", f"ticket-{ticket.pk}")
    data = json.dumps(body) if body is not None else ""

    response = getattr(APIClient(), method)(
        f"{SERVICE}{path}", data, content_type="application/json", **authorised(ticket)
    )

    assert response.status_code == expected
    assert not Registration.objects.exists()


def test_a_certificate_path_naming_no_file_stops_the_service_at_start(settings, tmp_path):
    environment = {**os.environ, "DEBUG": "true", "MUSEUM_WALLET_APPLE_KEY": str(tmp_path / "no")}

    started = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )

    assert started.returncode != 0
    assert f"MUSEUM_WALLET_APPLE_KEY: no file at '{tmp_path / 'no'}'" in started.stderr
