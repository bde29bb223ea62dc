import datetime as dt
import re
from decimal import Decimal
from io import BytesIO

import pytest
from django.contrib.auth.models import Permission
from django.core import mail
from django.core.cache import cache
from django.utils import timezone
from PIL import Image
from rest_framework.test import APIClient

from audit.models import Action, AuditRecord
from audit.services import recorded
from events.models import EventDate
from hours.models import MuseumDay
from orders import tokens
from orders.models import Ticket, TicketImage
from tests.conftest import (
    admission_statements,
    basic_auth,
    cache_commands,
    client_for,
    run_task_worker,
)
from tests.factories import MuseumDayFactory, SpecialEventFactory, UserFactory
from tests.qr import qr_text
from tickets import selectors

URL = "/v1.1/tickets"
CHECK_IN = "/v1.1/tickets/check-in"


def later(days: int = 3) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


@pytest.fixture
def open_day(db):
    return MuseumDayFactory(date=later())


@pytest.fixture
def event(db):
    return SpecialEventFactory(name="Pirate Coding Workshop", price=Decimal("45"), dates=[later()])


def general(day: dt.date, **extra) -> dict:
    return {
        "ticketType": "general",
        "ticketDate": day.isoformat(),
        "email": "ada@example.com",
        **extra,
    }


def for_event(event, day: dt.date, **extra) -> dict:
    return {**general(day), "ticketType": "event", "eventId": str(event.pk), **extra}


def buy(client, body):
    return client.post(URL, body, format="json")


# Buying


def test_a_visitor_buys_a_general_ticket(visitor_client, visitor, open_day):
    response = buy(visitor_client, general(open_day.date, phone="+1 (234) 567-8910"))

    assert response.status_code == 201
    body = response.json()
    ticket = Ticket.objects.get(pk=body["ticketId"])
    assert body == {
        "message": "Museum general entry ticket purchased",
        "ticketId": str(ticket.pk),
        "ticketType": "general",
        "ticketDate": open_day.date.isoformat(),
        "confirmationCode": ticket.confirmation_code,
    }
    assert re.fullmatch(r"ticket-general-[0-9a-z]{6}-[0-9a-z]{5}", ticket.confirmation_code)
    assert (ticket.buyer, ticket.price, ticket.order.phone) == (
        visitor,
        Decimal("15"),
        "+1 (234) 567-8910",
    )


def test_a_visitor_buys_an_event_ticket_at_the_events_price(visitor_client, event):
    response = buy(visitor_client, for_event(event, later()))

    assert response.status_code == 201
    body = response.json()
    assert body["message"] == "Museum special event ticket purchased"
    assert (body["ticketType"], body["eventId"], body["eventName"]) == (
        "event",
        str(event.pk),
        "Pirate Coding Workshop",
    )
    assert body["confirmationCode"].startswith("ticket-event-")
    assert Ticket.objects.get(pk=body["ticketId"]).price == Decimal("45")


def test_confirmation_codes_differ(visitor_client, open_day):
    codes = {
        buy(visitor_client, general(open_day.date)).json()["confirmationCode"] for _ in range(5)
    }

    assert len(codes) == 5


@pytest.mark.parametrize(
    "body, status, reason",
    [
        (lambda e: general(timezone.localdate() - dt.timedelta(days=1)), 400, "date_in_past"),
        (lambda e: general(later(4)), 400, "museum_closed"),
        (lambda e: for_event(e, later(4)), 400, "event_not_on_date"),
        (
            lambda e: for_event(e, later(), eventId="6744a0da-4121-49cd-8479-f8cc20526495"),
            404,
            "unknown_event",
        ),
    ],
)
def test_each_rule_is_refused_by_name(visitor_client, open_day, event, body, status, reason):
    response = buy(visitor_client, body(event))

    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["reason"] == reason
    assert not Ticket.objects.exists()


def test_a_closed_day_sells_no_general_tickets(visitor_client):
    MuseumDayFactory(date=later(), is_closed=True, opens_at=None, closes_at=None)

    assert buy(visitor_client, general(later())).json()["reason"] == "museum_closed"


def test_a_cancelled_event_sells_no_tickets(visitor_client, staff_client, event):
    staff_client.delete(f"/v1.1/special-events/{event.pk}")

    assert buy(visitor_client, for_event(event, later())).status_code == 404


@pytest.mark.parametrize(
    "change, field",
    [
        ({"ticketType": "vip"}, "ticketType"),
        ({"ticketType": "event"}, "eventId"),
        ({"eventId": "6744a0da-4121-49cd-8479-f8cc20526495"}, "eventId"),
        ({"email": "not-an-email"}, "email"),
        ({"email": 12}, "email"),
        ({"phone": "call me"}, "phone"),
        ({"phone": "+12"}, "phone"),
        ({"phone": "+1234567890123456"}, "phone"),
        ({"ticketDate": "2030-02-30"}, "ticketDate"),
        ({"ticketDate": None}, "ticketDate"),
    ],
)
def test_malformed_purchases_are_a_validation_problem(visitor_client, open_day, change, field):
    response = buy(visitor_client, {**general(open_day.date), **change})

    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Ticket.objects.exists()


def test_an_event_id_that_is_a_number_is_refused(visitor_client, event):
    response = buy(visitor_client, for_event(event, later(), eventId=12345))

    assert response.status_code == 400
    assert "eventId" in response.json()["errors"]


def test_buying_needs_credentials(anonymous_client, open_day):
    assert buy(anonymous_client, general(open_day.date)).status_code == 401


def test_a_purchase_costs_a_few_queries(visitor_client, event, open_day, django_assert_num_queries):
    # The account; the default visitor category; the event's row lock and its date's row (event
    # tickets only) or the day's entry slots (general ones); the place taken; the account's
    # permissions (its own and its groups': does it sell on account?) and its own limits; the
    # order; its payment on account; the ticket; its audit record; its order's confirmation
    # email task; its invoice's number (one statement) and row (its payment on account is
    # known: one of its total); without a shared cache, the rows vouchers keep places on and
    # the drops not over (each kept in the process with one). The test's transaction adds a
    # savepoint and its release.
    with django_assert_num_queries(19):
        assert buy(visitor_client, for_event(event, later())).status_code == 201
    with django_assert_num_queries(18):
        assert buy(visitor_client, general(open_day.date)).status_code == 201


# Capacity


def test_the_last_place_sells_and_the_next_buyer_hears_sold_out(visitor_client):
    MuseumDayFactory(date=later(), capacity=2)

    statuses = [buy(visitor_client, general(later())).status_code for _ in range(3)]

    assert statuses == [201, 201, 409]
    assert MuseumDay.objects.get(date=later()).sold == 2


def test_event_capacity_is_per_date(staff_client, visitor_client):
    created = staff_client.post(
        "/v1.1/special-events",
        {
            "name": "Tea",
            "location": "Tearoom",
            "eventDescription": "Tea.",
            "dates": [later().isoformat(), later(4).isoformat()],
            "price": 5,
            "capacity": 1,
        },
        format="json",
    ).json()
    event_id = created["eventId"]
    body = {**general(later()), "ticketType": "event", "eventId": event_id}

    first = buy(visitor_client, body)
    second = buy(visitor_client, body)
    other_day = buy(visitor_client, {**body, "ticketDate": later(4).isoformat()})

    assert created["capacity"] == 1
    assert (first.status_code, second.status_code, other_day.status_code) == (201, 409, 201)
    assert second.json()["reason"] == "sold_out"


def test_capacity_cannot_drop_below_tickets_sold(staff_client, visitor_client, event):
    for _ in range(2):
        buy(visitor_client, for_event(event, later()))

    lowered = staff_client.patch(f"/v1.1/special-events/{event.pk}", {"capacity": 1}, format="json")
    exact = staff_client.patch(f"/v1.1/special-events/{event.pk}", {"capacity": 2}, format="json")

    assert lowered.status_code == 409
    assert lowered.json()["reason"] == "capacity_below_sold"
    assert exact.status_code == 200
    assert buy(visitor_client, for_event(event, later())).status_code == 409


def test_a_date_with_tickets_cannot_be_removed(staff_client, visitor_client, event):
    buy(visitor_client, for_event(event, later()))

    response = staff_client.patch(
        f"/v1.1/special-events/{event.pk}", {"dates": [later(5).isoformat()]}, format="json"
    )

    assert response.status_code == 409
    assert response.json()["reason"] == "dates_have_tickets"
    assert list(EventDate.objects.values_list("date", flat=True)) == [later()]


def test_dates_added_later_get_the_events_capacity(staff_client, visitor_client):
    event = SpecialEventFactory(dates=[later()])
    staff_client.patch(f"/v1.1/special-events/{event.pk}", {"capacity": 1}, format="json")
    staff_client.patch(
        f"/v1.1/special-events/{event.pk}",
        {"dates": [later().isoformat(), later(6).isoformat()]},
        format="json",
    )

    assert [buy(visitor_client, for_event(event, later(6))).status_code for _ in range(2)] == [
        201,
        409,
    ]


# The ticket image


def bought(client, body) -> Ticket:
    return Ticket.objects.get(pk=buy(client, body).json()["ticketId"])


def qr_url(ticket) -> str:
    return f"{URL}/{ticket.pk}/qr"


def test_the_owner_gets_a_png_whose_qr_verifies_as_the_ticket(visitor_client, open_day):
    ticket = bought(visitor_client, general(open_day.date))

    response = visitor_client.get(qr_url(ticket))

    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    claim = tokens.verify_ticket_token(qr_text(response.content))
    assert (claim.ticket_id, claim.date) == (ticket.pk, ticket.date)
    width, height = Image.open(BytesIO(response.content)).size
    assert width >= 600 and height >= 600


def test_the_image_is_drawn_once_and_revalidates_with_its_etag(visitor_client, open_day):
    ticket = bought(visitor_client, general(open_day.date))

    first = visitor_client.get(qr_url(ticket))
    again = visitor_client.get(qr_url(ticket))
    unchanged = visitor_client.get(qr_url(ticket), HTTP_IF_NONE_MATCH=first["ETag"])

    assert TicketImage.objects.count() == 1
    assert again.content == first.content and again["ETag"] == first["ETag"]
    assert "private" in first["Cache-Control"] and "max-age=86400" in first["Cache-Control"]
    assert unchanged.status_code == 304 and unchanged.content == b""


@pytest.mark.parametrize(
    "if_none_match",
    ["{etag}", "W/{etag}", '"other", {etag}', "*"],
    ids=["same", "weak", "in a list", "any"],
)
def test_a_matching_if_none_match_gets_a_304_with_the_same_headers(
    visitor_client, open_day, if_none_match
):
    ticket = bought(visitor_client, general(open_day.date))
    etag = visitor_client.get(qr_url(ticket))["ETag"]

    response = visitor_client.get(
        qr_url(ticket), HTTP_IF_NONE_MATCH=if_none_match.format(etag=etag)
    )

    assert response.status_code == 304 and response.content == b""
    assert response["ETag"] == etag and "max-age=86400" in response["Cache-Control"]


def test_an_etag_that_only_contains_the_images_is_no_match(visitor_client, open_day):
    ticket = bought(visitor_client, general(open_day.date))
    etag = visitor_client.get(qr_url(ticket))["ETag"]

    response = visitor_client.get(qr_url(ticket), HTTP_IF_NONE_MATCH=f'"x{etag}x"')

    assert response.status_code == 200 and response.content.startswith(b"\x89PNG")


def test_a_client_asking_for_png_gets_it(visitor_client, open_day):
    ticket = bought(visitor_client, general(open_day.date))

    response = visitor_client.get(qr_url(ticket), HTTP_ACCEPT="image/png")

    assert response.status_code == 200 and response["Content-Type"] == "image/png"


def test_staff_see_any_ticket_and_other_visitors_see_nothing(
    visitor_client, staff_client, open_day
):
    ticket = bought(visitor_client, general(open_day.date))
    stranger = client_for(UserFactory(username="stranger"))

    assert staff_client.get(qr_url(ticket)).status_code == 200
    hidden = stranger.get(qr_url(ticket), HTTP_ACCEPT="image/png")
    assert hidden.status_code == 404
    assert hidden["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize("drawn", [False, True])
def test_is_staff_alone_or_door_staff_see_no_other_buyers_ticket(
    visitor_client, bare_staff, door_staff, open_day, drawn
):
    ticket = bought(visitor_client, general(open_day.date))
    if drawn:
        assert visitor_client.get(qr_url(ticket)).status_code == 200

    for account in (bare_staff, door_staff):
        hidden = client_for(account).get(qr_url(ticket), HTTP_ACCEPT="image/png")
        assert hidden.status_code == 404
        assert hidden["Content-Type"] == "application/problem+json"


def test_the_view_ticket_permission_alone_sees_any_ticket(visitor_client, open_day):
    ticket = bought(visitor_client, general(open_day.date))
    auditor = UserFactory(username="auditor")
    auditor.user_permissions.add(Permission.objects.get(codename="view_ticket"))

    assert client_for(auditor).get(qr_url(ticket)).status_code == 200


@pytest.mark.parametrize("ticket_id", ["6744a0da-4121-49cd-8479-f8cc20526495", "not-a-uuid"])
def test_unknown_tickets_are_a_404_problem(visitor_client, ticket_id):
    response = visitor_client.get(f"{URL}/{ticket_id}/qr")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_a_drawn_image_comes_from_the_shared_cache(
    visitor_client, open_day, response_cache, django_assert_num_queries
):
    ticket = bought(visitor_client, general(open_day.date))
    visitor_client.get(qr_url(ticket))

    with django_assert_num_queries(1):  # the account
        assert visitor_client.get(qr_url(ticket)).status_code == 200


def test_a_signed_in_read_of_a_drawn_image_is_one_cache_round_trip(
    shared_redis_cache, response_cache, visitor_client, open_day
):
    ticket = bought(visitor_client, general(open_day.date))
    first = visitor_client.get(qr_url(ticket))
    visitor_client.get(qr_url(ticket))  # the account, kept with the remembered credential
    answers = []

    # The sign-in's one script reads the kept image with the credential and counts the rate.
    assert cache_commands(lambda: answers.append(visitor_client.get(qr_url(ticket)))) == ["EVALSHA"]
    assert answers[0].status_code == 200
    assert answers[0].content == first.content


def test_without_the_shared_cache_a_drawn_image_is_one_query(
    visitor_client, open_day, settings, django_assert_num_queries
):
    settings.MUSEUM_RESPONSE_CACHE_SECONDS = 0
    ticket = bought(visitor_client, general(open_day.date))
    visitor_client.get(qr_url(ticket))

    with django_assert_num_queries(2):  # the account, the image with its buyer
        assert visitor_client.get(qr_url(ticket)).status_code == 200


def test_a_deleted_image_is_dropped_from_the_cache_again_when_the_deletion_commits(
    visitor_client, open_day, response_cache, django_capture_on_commit_callbacks
):
    ticket = bought(visitor_client, general(open_day.date))
    drawn = visitor_client.get(qr_url(ticket))
    key = selectors.drawn_image_key(ticket.pk)

    with django_capture_on_commit_callbacks(execute=True):
        TicketImage.objects.filter(pk=ticket.pk).delete()
        assert cache.get(key) is None
        # A reader that still saw the row before the commit puts it back.
        stale = selectors.DrawnImage(drawn["ETag"].strip('"'), drawn.content, ticket.buyer_id)
        cache.set(key, stale)

    assert cache.get(key) is None


def test_the_signing_key_verifies_a_token_offline(visitor_client, open_day):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    ticket = bought(visitor_client, general(open_day.date))
    token = qr_text(visitor_client.get(qr_url(ticket)).content)
    [key] = visitor_client.get(f"{URL}/signing-key").json()

    raw = tokens.base64.urlsafe_b64decode(token[4:] + "=" * (-len(token[4:]) % 4))
    payload, signature = raw[:24], raw[24:]
    public = Ed25519PublicKey.from_public_bytes(
        tokens.base64.urlsafe_b64decode(key["publicKey"] + "=")
    )
    public.verify(signature, payload)  # raises if the published key does not match
    assert payload[:4].hex() == key["keyId"]
    assert payload[4:20] == ticket.pk.bytes


# Check-in


@pytest.fixture
def todays_ticket(visitor_client):
    MuseumDayFactory(date=timezone.localdate())
    ticket = bought(visitor_client, general(timezone.localdate()))
    return qr_text(visitor_client.get(qr_url(ticket)).content), ticket


def test_the_first_scan_admits_and_the_second_names_the_first_entry(
    staff_client, staff, todays_ticket
):
    code, ticket = todays_ticket

    first = staff_client.post(CHECK_IN, {"code": code}, format="json")
    second = staff_client.post(CHECK_IN, {"code": code}, format="json")

    assert first.status_code == 200
    assert first.json()["ticketId"] == str(ticket.pk)
    assert first.json()["confirmationCode"] == ticket.confirmation_code
    ticket.refresh_from_db()
    assert ticket.checked_in_by == staff
    assert second.status_code == 409
    assert second.json()["reason"] == "already_checked_in"
    assert second.json()["firstEntryAt"] == ticket.checked_in_at.isoformat()


@pytest.mark.parametrize("read", ["qr", "code"])
def test_an_event_tickets_check_in_names_its_event(staff_client, visitor_client, read):
    today = timezone.localdate()
    event = SpecialEventFactory(name="Night at the Museum", dates=[today])
    ticket = bought(visitor_client, for_event(event, today))
    if read == "qr":
        code = qr_text(visitor_client.get(qr_url(ticket)).content)
    else:
        code = ticket.confirmation_code

    body = staff_client.post(CHECK_IN, {"code": code}, format="json").json()

    assert (body["ticketId"], body["eventName"]) == (str(ticket.pk), "Night at the Museum")
    assert body["ticketType"] == "event" and body["ticketDate"] == today.isoformat()


def test_an_untimed_contract_tickets_check_in_has_no_entry_slot(staff_client, todays_ticket):
    code, _ = todays_ticket

    body = staff_client.post(CHECK_IN, {"code": code}, format="json").json()

    assert (body["category"], body["checkAtDoor"], body["entryTime"]) == ("adult", False, None)


def test_a_general_tickets_check_in_has_no_event_name(staff_client, todays_ticket):
    code, _ = todays_ticket

    assert staff_client.post(CHECK_IN, {"code": code}, format="json").json()["eventName"] is None


def test_a_confirmation_code_read_aloud_also_admits(staff_client, todays_ticket):
    _, ticket = todays_ticket

    response = staff_client.post(CHECK_IN, {"code": ticket.confirmation_code}, format="json")

    assert response.status_code == 200


def tampered(code: str) -> str:
    body = code[4:]
    flipped = "A" if body[10] != "A" else "B"
    return code[:4] + body[:10] + flipped + body[11:]


@pytest.mark.parametrize("mangle", [tampered, lambda code: code[:-6], lambda code: code + "=="])
def test_forged_codes_are_refused(staff_client, todays_ticket, mangle):
    code, ticket = todays_ticket

    response = staff_client.post(CHECK_IN, {"code": mangle(code)}, format="json")

    assert response.status_code == 400
    assert response.json()["reason"] == "forged"
    ticket.refresh_from_db()
    assert ticket.checked_in_at is None


def test_a_token_signed_with_another_key_is_forged(staff_client, todays_ticket, settings):
    code, _ = todays_ticket
    settings.SECRET_KEY = "another museum entirely, with its own secret key"

    response = staff_client.post(CHECK_IN, {"code": code}, format="json")

    assert response.json()["reason"] == "forged"


def test_a_ticket_for_another_day_is_refused(staff_client, visitor_client, open_day):
    ticket = bought(visitor_client, general(open_day.date))

    response = staff_client.post(CHECK_IN, {"code": ticket.confirmation_code}, format="json")

    assert response.status_code == 409
    assert response.json()["reason"] == "wrong_day"


def test_is_staff_without_the_check_in_permission_cannot_check_in(bare_staff, todays_ticket):
    code, ticket = todays_ticket

    response = client_for(bare_staff).post(CHECK_IN, {"code": code}, format="json")

    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    ticket.refresh_from_db()
    assert ticket.checked_in_at is None


def test_door_staff_check_in(door_staff, todays_ticket):
    code, ticket = todays_ticket

    response = client_for(door_staff).post(CHECK_IN, {"code": code}, format="json")

    assert response.status_code == 200
    ticket.refresh_from_db()
    assert ticket.checked_in_by == door_staff


def test_visitors_cannot_check_in(visitor_client, todays_ticket):
    code, _ = todays_ticket

    response = visitor_client.post(CHECK_IN, {"code": code}, format="json")

    assert response.status_code == 403


def test_check_in_costs_a_few_queries(staff_client, todays_ticket, django_assert_num_queries):
    code, _ = todays_ticket

    # The account, its permissions (Django's two queries), the admission with what it shows and
    # its audit record: one statement on PostgreSQL, two on SQLite.
    with django_assert_num_queries(3 + admission_statements()):
        assert staff_client.post(CHECK_IN, {"code": code}, format="json").status_code == 200


def test_a_check_in_s_audit_record_is_the_one_every_other_change_writes(
    staff_client, staff, todays_ticket, django_capture_on_commit_callbacks
):
    # On PostgreSQL the admission writes its record in its own statement (record_rows_sql): the
    # same columns record_each writes for any other change, announced to the webhooks alike.
    code, ticket = todays_ticket
    announced = []

    def listener(sender, record, **kwargs):
        announced.append(record)

    recorded.connect(listener)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            answer = staff_client.post(
                CHECK_IN, {"code": code}, format="json", HTTP_X_REQUEST_ID="door-scan-1"
            )
    finally:
        recorded.disconnect(listener)

    assert answer.status_code == 200
    stored = AuditRecord.objects.get(action=Action.CHECKED_IN)
    ticket.refresh_from_db()
    expected = {
        "action": "checked_in",
        "object_type": "orders.ticket",
        "object_id": str(ticket.pk),
        "object_repr": str(ticket),
        "actor_id": staff.pk,
        "actor_name": staff.username,
        "request_id": "door-scan-1",
        "changes": {},
        "published": False,
    }
    assert {name: getattr(stored, name) for name in expected} == expected
    assert stored.at >= ticket.checked_in_at
    [sent] = announced
    assert sent.pk == stored.pk
    assert {name: getattr(sent, name) for name in expected} == expected


def test_a_remembered_door_credential_s_check_in_reads_only_what_the_door_needs(
    door_staff, todays_ticket, settings, django_assert_num_queries
):
    settings.SHARED_CACHE = True  # the account and its permissions kept with the credential
    code, _ = todays_ticket
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=basic_auth("door"))
    for _ in range(2):  # the hasher, then the account loaded and kept
        client.get("/v1.1/museum-hours")

    # One statement admits the ticket, reads what the door shows and (on PostgreSQL) writes its
    # audit record; SQLite writes the record with a second.
    with django_assert_num_queries(admission_statements()) as queries:
        assert client.post(CHECK_IN, {"code": code}, format="json").status_code == 200

    admission = queries.captured_queries[0]["sql"]
    # Neither the holder's contact details nor the event's description and prices.
    assert "email" not in admission and "description" not in admission and "price" not in admission


# Cancellation


def test_cancelling_an_event_cancels_its_tickets_and_stamps_their_images(
    staff_client, visitor_client
):
    MuseumDayFactory(date=timezone.localdate())
    event = SpecialEventFactory(dates=[timezone.localdate()])
    ticket = bought(visitor_client, for_event(event, timezone.localdate()))
    before = visitor_client.get(qr_url(ticket))

    staff_client.delete(f"/v1.1/special-events/{event.pk}")
    after = visitor_client.get(qr_url(ticket), HTTP_IF_NONE_MATCH=before["ETag"])
    scan = staff_client.post(CHECK_IN, {"code": ticket.confirmation_code}, format="json")

    ticket.refresh_from_db()
    assert ticket.cancelled_at is not None
    assert after.status_code == 200 and after["ETag"] != before["ETag"]
    red = Image.open(BytesIO(after.content)).convert("RGB").getcolors(1 << 20)
    assert any(r > 150 and g < 80 and b < 80 for _, (r, g, b) in red)  # the red CANCELLED
    assert scan.status_code == 409 and scan.json()["reason"] == "cancelled"


# Confirmation email


@pytest.mark.django_db(transaction=True)  # the task worker commits
def test_the_buyer_gets_an_email_with_the_code_and_the_ticket(visitor_client, open_day):
    body = buy(visitor_client, general(open_day.date, email="grace@example.com")).json()
    run_task_worker()  # what the worker beside the server does within seconds

    [message] = mail.outbox
    assert message.to == ["grace@example.com"]
    assert body["confirmationCode"] in message.body
    # The order's email, as every sale's: the ticket in its print-at-home PDF.
    order = Ticket.objects.select_related("order").get(pk=body["ticketId"]).order
    [(name, content, mimetype), (_, _, calendar), _invoice] = message.attachments
    assert mimetype == "application/pdf" and name == f"{order.confirmation_code}.pdf"
    assert content.startswith(b"%PDF") and calendar == "text/calendar"


@pytest.mark.django_db(transaction=True)  # the task worker commits
def test_a_failing_mail_server_does_not_undo_the_purchase(visitor_client, open_day, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens: refused

    response = buy(visitor_client, general(open_day.date))
    run_task_worker()
    assert not mail.outbox

    assert response.status_code == 201
    assert Ticket.objects.filter(pk=response.json()["ticketId"]).exists()


def test_a_ticket_without_a_category_checks_in_with_nothing_to_check(staff_client, todays_ticket):
    code, ticket = todays_ticket
    type(ticket).objects.filter(pk=ticket.pk).update(category=None)  # sold before categories

    body = staff_client.post(CHECK_IN, {"code": code}, format="json").json()

    assert (body["category"], body["checkAtDoor"]) == (None, False)
