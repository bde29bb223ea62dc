"""Hostile input at every write and every query parameter of the API, payments and webhook
subscriptions included (the pages' faces are in test_hostile_faces.py).

Each answer is the right 4xx problem or an exact round trip: never a 500, never a partial write.
"""

import datetime as dt
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import quote

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from events.models import EventDate, SpecialEvent
from events.serializers import DEFAULT_RANGE_DAYS, MAX_RANGE_DAYS
from hours.models import MuseumDay
from museum.models import IdempotencyKey
from museum.query import DEFAULT_LIMIT, MAX_LIMIT
from orders import tokens
from orders.models import (
    Membership,
    MembershipSale,
    MembershipType,
    Order,
    Payment,
    Refund,
    Ticket,
    TicketType,
)
from orders.services.memberships import sell_membership
from orders.services.sale import place_order
from tests.conftest import EVENT, assert_problem, buy_event_ticket, client_for
from tests.factories import (
    MuseumDayFactory,
    SpecialEventFactory,
    TicketFactory,
    UserFactory,
    days_from_today,
    partner_member,
    staff_member,
)
from tests.qr import qr_text
from webhooks.models import Subscription

TEN_MEGABYTES = 10 * 1024 * 1024


def database_state() -> tuple:
    """Everything a write could touch, to show a refused request changed nothing."""
    return (
        list(SpecialEvent.objects.order_by("pk").values_list()),
        list(EventDate.objects.order_by("pk").values_list()),
        list(MuseumDay.objects.order_by("pk").values_list()),
        list(Ticket.objects.order_by("pk").values_list()),
        IdempotencyKey.objects.count(),
        list(Order.objects.order_by("pk").values_list()),
        list(Payment.objects.order_by("pk").values_list()),
        list(Refund.objects.order_by("pk").values_list()),
        list(Subscription.objects.order_by("pk").values_list()),
        list(Membership.objects.order_by("pk").values_list()),
        list(MembershipSale.objects.order_by("pk").values_list()),
    )


@dataclass
class Write:
    client: APIClient
    method: str
    url: str
    body: dict  # a body that would succeed
    text_fields: tuple[str, ...]

    def send(self, payload, content_type="application/json"):
        if not isinstance(payload, bytes | str):
            payload = json.dumps(payload)
        return self.client.generic(self.method, self.url, payload, content_type=content_type)

    def valid_json(self) -> str:
        return json.dumps(self.body)


@pytest.fixture
def world(db, settings):
    """An event, an open day in three days and today, and a ticket for today to scan; an order
    held until paid, one sold on account, and a webhook subscription."""
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MUSEUM_WEBHOOK_ALLOW_HTTP = True
    staff = staff_member(username="staff")
    visitor = partner_member(username="visitor")
    event = SpecialEventFactory(name="Night at the museum", dates=[days_from_today(3)])
    MuseumDayFactory(date=days_from_today(3))
    MuseumDayFactory(date=timezone.localdate())
    ticket = TicketFactory(
        buyer=visitor,
        date=timezone.localdate(),
        confirmation_code="ticket-general-abcdef-12345",
    )
    sale = {
        "ticket_type": TicketType.GENERAL,
        "ticket_date": days_from_today(3),
        "lines": [{"category": "adult", "quantity": 1}],
        "email": "ada@example.com",
    }
    held = place_order(buyer=UserFactory(username="online"), hold=True, **sale)
    sold = place_order(buyer=visitor, **sale)
    subscription = Subscription.objects.create(
        owner=visitor, url="http://127.0.0.1:9/hook", event_types=["order.confirmed"]
    )
    MembershipType.objects.create(code="individual", name="Individual", price=60)
    gift = sell_membership(
        buyer=visitor, type_code="individual", holder_name="", email="a@example.com", gift=True
    )
    return {
        "staff": staff,
        "visitor": visitor,
        "event": event,
        "ticket": ticket,
        "held": held,
        "sold": sold,
        "subscription": subscription,
        "gift": gift,
    }


WRITES = [
    "create-event",
    "update-event",
    "buy-ticket",
    "place-order",
    "check-in",
    "start-payment",
    "cancel-order",
    "subscribe-webhook",
    "change-webhook",
    "buy-membership",
    "redeem-gift",
]


@pytest.fixture(params=WRITES)
def write(request, world) -> Write:
    staff, visitor = client_for(world["staff"]), client_for(world["visitor"])
    event_url = f"/v1.1/special-events/{world['event'].pk}"
    ticket = {
        "ticketType": "general",
        "ticketDate": days_from_today(3).isoformat(),
        "email": "ada@example.com",
        "phone": "+31 20 123 4567",
    }
    return {
        "create-event": Write(
            staff, "POST", "/v1.1/special-events", EVENT, ("name", "location", "eventDescription")
        ),
        "update-event": Write(
            staff, "PATCH", event_url, {"name": "Renamed"}, ("name", "location", "eventDescription")
        ),
        "buy-ticket": Write(
            visitor, "POST", "/v1.1/tickets", ticket, ("ticketType", "ticketDate", "email", "phone")
        ),
        "place-order": Write(
            visitor,
            "POST",
            "/v1.1/orders",
            {**ticket, "lines": [{"category": "adult", "quantity": 2}], "hold": True},
            ("ticketType", "ticketDate", "email", "phone"),
        ),
        "check-in": Write(
            staff,
            "POST",
            "/v1.1/tickets/check-in",
            {"code": world["ticket"].confirmation_code},
            ("code",),
        ),
        "start-payment": Write(
            staff,
            "POST",
            f"/v1.1/orders/{world['held'].pk}/payments",
            {"provider": "desk", "method": "cash"},
            ("provider", "method"),
        ),
        "cancel-order": Write(
            visitor,
            "POST",
            f"/v1.1/orders/{world['sold'].pk}/cancel",
            {"evenIfCheckedIn": False},
            (),
        ),
        "subscribe-webhook": Write(
            visitor,
            "POST",
            "/v1.1/webhooks",
            {"url": "http://127.0.0.1:9/other", "eventTypes": ["order.confirmed"]},
            ("url",),
        ),
        "change-webhook": Write(
            visitor,
            "PATCH",
            f"/v1.1/webhooks/{world['subscription'].pk}",
            {"url": "http://127.0.0.1:9/moved"},
            ("url",),
        ),
        "buy-membership": Write(
            visitor,
            "POST",
            "/v1.1/memberships",
            {
                "membershipType": "individual",
                "holderName": "Ada Lovelace",
                "email": "ada@example.com",
                "startDate": days_from_today(3).isoformat(),
            },
            ("membershipType", "holderName", "email"),
        ),
        "redeem-gift": Write(
            visitor,
            "POST",
            "/v1.1/memberships/redeem",
            {"giftCode": world["gift"].gift_code, "holderName": "Ada", "email": "ada@example.com"},
            ("giftCode", "holderName", "email"),
        ),
    }[request.param]


def assert_refused(write: Write, payload, status: int, content_type="application/json") -> dict:
    before = database_state()
    response = write.send(payload, content_type)
    problem = assert_problem(response, status)
    assert database_state() == before
    return problem


def test_every_write_succeeds_with_its_valid_body(write):
    # The baseline: each refusal below is about the one thing that was changed.
    assert write.send(write.body).status_code in (200, 201)


# Malformed JSON

MALFORMED = [
    '{"name": "x",',
    "{",
    "}",
    "nul",
    "{'name': 'x'}",
    '{"name" "x"}',
    '{"a": 1}}',
    "[1, 2,]",
    '{"a": 01}',
    '{"a": "unterminated}',
    '{"a": "\\x41"}',
    "\ufeff{}",
]


@pytest.mark.parametrize("payload", MALFORMED)
def test_malformed_json_is_a_parse_error(write, payload):
    assert assert_refused(write, payload, 400)["code"] == "parse_error"


def test_truncated_json_is_a_parse_error(write):
    text = write.valid_json()
    for end in sorted({1, len(text) // 3, len(text) // 2, len(text) - 1}):
        assert assert_refused(write, text[:end], 400)["code"] == "parse_error"


def test_bytes_that_are_not_utf8_are_a_parse_error(write):
    assert assert_refused(write, b'{"name": "\xff\xfe"}', 400)["code"] == "parse_error"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(write, constant):
    text = write.valid_json()[:-1] + f', "extra": {constant}}}'

    assert assert_refused(write, text, 400)["code"] == "parse_error"


# Deep nesting: Python's decoder recurses once per level.


def test_deeply_nested_json_within_the_body_limit_is_a_parse_error(write):
    assert assert_refused(write, "[" * 30_000 + "]" * 30_000, 400)["code"] == "parse_error"
    assert assert_refused(write, '{"a":' * 10_000 + "1" + "}" * 10_000, 400)["code"] == (
        "parse_error"
    )


def test_a_hundred_thousand_nested_arrays_are_refused_at_any_body_limit(write, settings):
    nested = "[" * 100_000 + "]" * 100_000
    assert_refused(write, nested, 413)
    settings.MUSEUM_MAX_BODY_BYTES = 10 * len(nested)

    assert assert_refused(write, nested, 400)["code"] == "parse_error"
    for field in write.text_fields[:1]:  # inside the first text field, where there is one
        inside = write.valid_json()[:-1] + f', "{field}": {nested}}}'
        assert assert_refused(write, inside, 400)["code"] == "parse_error"


# The wrong shape

WRONG_SHAPES = ["[]", "[1, 2]", '[{"name": "x"}]', '"text"', "1", "1.5", "true", "null"]


@pytest.mark.parametrize("payload", WRONG_SHAPES)
def test_json_that_is_not_an_object_is_a_validation_problem(write, payload):
    assert assert_refused(write, payload, 400)["code"] == "validation_error"


@pytest.mark.parametrize(
    "value", [None, 12, 1.5, True, [], ["x"], {}, {"a": "b"}], ids=lambda value: repr(value)
)
def test_a_text_field_of_another_json_type_is_refused_by_name(write, value):
    for field in write.text_fields:
        problem = assert_refused(write, {**write.body, field: value}, 400)
        assert field in problem["errors"]


# Text that is not text: NUL and lone surrogates

BROKEN_TEXT = {"nul": "a\x00b", "lone-high-surrogate": "a\ud800b", "lone-low-surrogate": "\udfff"}


@pytest.mark.parametrize("text", BROKEN_TEXT.values(), ids=BROKEN_TEXT.keys())
def test_nul_and_lone_surrogates_are_refused_in_every_text_field(write, text):
    for field in write.text_fields:
        # json.dumps writes the surrogate as \ud800, as a hostile client would.
        problem = assert_refused(write, {**write.body, field: text}, 400)
        assert field in problem["errors"], problem


def test_a_lone_surrogate_in_an_unknown_member_is_ignored_like_any_unknown_member(write):
    response = write.send({**write.body, "\ud800": "\udfff"})

    assert response.status_code in (200, 201)


# Size


def test_a_ten_megabyte_body_is_a_413(write):
    padded = write.valid_json() + " " * TEN_MEGABYTES

    assert_refused(write, padded, 413)


# Content types


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=xyz",
        "application/xml",
        "application/jsonx",
        "",  # no Content-Type at all
    ],
)
def test_a_body_that_is_not_declared_json_is_a_415(write, content_type):
    assert_refused(write, write.valid_json(), 415, content_type=content_type)


@pytest.mark.parametrize("charset", ["utf-16", "utf-32", "bz2_codec", "rot13"])
def test_a_charset_the_body_is_not_in_is_a_400(write, charset):
    assert_refused(
        write, write.valid_json(), 400, content_type=f"application/json; charset={charset}"
    )


# Numbers

EVENT_NUMBERS = [
    ("price", "1e400"),
    ("price", "-1e400"),
    ("price", "1" + "0" * 400),
    ("price", "9" * 5000),
    ("price", "1e99999999999999999999"),
    ("price", "1e-400"),
    ("price", "12.345"),
    ("price", "19.999999999999999999"),
    ("price", "1e308"),
    ("price", "1000000"),
    ("price", "-0.01"),
    ("price", '"10"'),
    ("capacity", "1" + "0" * 30),
    ("capacity", str(2**63)),
    ("capacity", "-1"),
    ("capacity", "1.5"),
    ("capacity", "1e3"),
    ("capacity", "2.0"),
    ("capacity", "true"),
]


@pytest.mark.parametrize("field, number", EVENT_NUMBERS)
def test_numbers_out_of_range_or_not_exact_are_refused(world, field, number):
    staff = client_for(world["staff"])
    for method, url in [
        ("POST", "/v1.1/special-events"),
        ("PATCH", f"/v1.1/special-events/{world['event'].pk}"),
    ]:
        text = json.dumps(EVENT)[:-1] + f', "{field}": {number}}}'
        before = database_state()
        response = staff.generic(method, url, text, content_type="application/json")
        problem = assert_problem(response, 400)
        assert field in problem.get("errors", {}) or problem["code"] == "parse_error"
        assert database_state() == before


@pytest.mark.parametrize(
    "number, stored",
    [
        ("0", "0"),
        ("0.01", "0.01"),
        ("999999.99", "999999.99"),
        ("19.990", "19.99"),
        ("1e2", "100"),
        ("0e-400", "0"),
        ("-0.0", "0"),
        ("12.5", "12.5"),
    ],
)
def test_prices_are_kept_exactly(world, number, stored):
    staff = client_for(world["staff"])
    text = json.dumps(EVENT)[:-1] + f', "price": {number}}}'

    response = staff.generic("POST", "/v1.1/special-events", text, content_type="application/json")

    assert response.status_code == 201
    assert SpecialEvent.objects.get(pk=response.json()["eventId"]).price == Decimal(stored)
    assert Decimal(str(response.json()["price"])) == Decimal(stored)


# Dates

BAD_DATES = [
    "0000-01-01",
    "2023-02-29",
    "2024-1-1",
    "2024-01-01T00:00:00",
    "20240101",
    "2024-13-01",
    "2024-00-10",
    "2024-01-32",
    "-2024-01-01",
    "+2024-01-01",
    " 2030-01-01",
    "2030-01-01 ",
    "\u0662\u0660\u0663\u0660-\u0660\u0661-\u0660\u0661",  # Arabic-Indic digits
    "１９９９-０１-０１",  # fullwidth digits
    "10000-01-01",
    "",
]


@pytest.mark.parametrize("value", BAD_DATES)
def test_dates_that_are_not_real_yyyy_mm_dd_are_refused(world, value):
    staff, visitor = client_for(world["staff"]), client_for(world["visitor"])
    event_url = f"/v1.1/special-events/{world['event'].pk}"
    ticket = {"ticketType": "general", "ticketDate": value, "email": "ada@example.com"}
    for client, method, url, body, field in [
        (staff, "POST", "/v1.1/special-events", {**EVENT, "dates": [value]}, "dates.0"),
        (staff, "PATCH", event_url, {"dates": ["2030-01-01", value]}, "dates.1"),
        (visitor, "POST", "/v1.1/tickets", ticket, "ticketDate"),
    ]:
        before = database_state()
        response = client.generic(method, url, json.dumps(body), content_type="application/json")
        assert field in assert_problem(response, 400)["errors"]
        assert database_state() == before


def test_the_last_day_of_the_calendar_round_trips(world):
    staff, visitor = client_for(world["staff"]), client_for(world["visitor"])
    created = staff.post(
        "/v1.1/special-events", {**EVENT, "dates": ["9999-12-31", "0001-01-01"]}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["dates"] == ["0001-01-01", "9999-12-31"]
    for query in [
        {"startDate": "9999-12-31"},
        {"startDate": "9999-12-25", "endDate": "9999-12-31"},
        {"startDate": "0001-01-01", "endDate": "0001-01-02"},
    ]:
        listed = staff.get("/v1.1/special-events", query)
        assert [event["eventId"] for event in listed.json()] == [created.json()["eventId"]]
    event_id = created.json()["eventId"]
    ticket = {"ticketType": "event", "eventId": event_id, "email": "ada@example.com"}
    bought = visitor.post("/v1.1/tickets", {**ticket, "ticketDate": "9999-12-31"}, format="json")
    assert bought.status_code == 201
    past = visitor.post("/v1.1/tickets", {**ticket, "ticketDate": "0001-01-01"}, format="json")
    assert assert_problem(past, 400)["reason"] == "date_in_past"


@pytest.mark.parametrize("times", ["25:00-26:00", "09:60-10:00", "24:00-24:30", "18:00-09:00"])
def test_times_of_day_that_do_not_exist_are_refused_by_seed_hours(db, times):
    with pytest.raises(CommandError, match="--pattern"):
        call_command("seed_hours", "--days", "7", "--pattern", f"mon {times}")

    assert not MuseumDay.objects.exists()


@pytest.mark.parametrize("opens_at", ["25:00", "09:60", "-1:00", "9:00:99", "\x00", "noon"])
def test_times_of_day_that_do_not_exist_are_refused_by_the_admin(client, db, opens_at):
    client.force_login(UserFactory(username="admin", is_staff=True, is_superuser=True))

    response = client.post(
        "/admin/hours/museumday/add/",
        {"date": "2031-05-05", "opens_at": opens_at, "closes_at": "17:00", "note": "Test"},
    )

    assert response.status_code == 200  # the form again, with its errors
    assert "opens_at" in response.context["adminform"].form.errors
    assert not MuseumDay.objects.exists()


# SQL, HTML and other people's scripts: stored verbatim, escaped where they are shown.

VERBATIM = [
    "Robert'); DROP TABLE events_specialevent;--",
    '" OR 1=1 --',
    "<script>alert('museum')</script>",
    "<img src=x onerror=alert(1)>",
    "{{ 7*7 }} {% debug %} %s %(name)s ${7*7}",
    "🎨🖼️ Art & 👩🏽‍🎨 painters",
    "معرض الفن الحديث",
    "\u202etxt.exe\u202c right-to-left override",
    "e\u0301 (decomposed) and é (composed)",
    "\U0001f600" * 200,
]


@pytest.mark.parametrize("text", VERBATIM)
def test_any_text_round_trips_exactly(world, text):
    staff = client_for(world["staff"])
    body = {**EVENT, "name": text, "location": text, "eventDescription": text}

    created = staff.post("/v1.1/special-events", body, format="json")
    assert created.status_code == 201, created.content
    event_url = f"/v1.1/special-events/{created.json()['eventId']}"
    patched = staff.patch(event_url, {"name": text[::-1]}, format="json")

    fetched = staff.get(event_url).json()
    assert fetched["location"] == fetched["eventDescription"] == text
    assert patched.json()["name"] == fetched["name"] == text[::-1]


def test_text_one_character_too_long_is_refused(world):
    staff = client_for(world["staff"])

    response = staff.post(
        "/v1.1/special-events", {**EVENT, "name": "\U0001f600" * 201}, format="json"
    )

    assert "name" in assert_problem(response, 400)["errors"]


def test_html_in_names_is_escaped_in_the_admin_and_drawn_as_text_on_the_ticket(world, client):
    script = "<script>alert('museum')</script>"
    event = SpecialEventFactory(name=script, dates=[days_from_today(3)])
    visitor = client_for(world["visitor"])
    bought = buy_event_ticket(visitor, event, days_from_today(3))
    assert bought.status_code == 201 and bought.json()["eventName"] == script
    ticket_id = bought.json()["ticketId"]

    image = visitor.get(f"/v1.1/tickets/{ticket_id}/qr")
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert str(tokens.verify_ticket_token(qr_text(image.content)).ticket_id) == ticket_id

    client.force_login(UserFactory(username="admin", is_staff=True, is_superuser=True))
    for page in [
        "/admin/events/specialevent/",
        f"/admin/events/specialevent/{event.pk}/change/",
        f"/admin/orders/ticket/{ticket_id}/change/",
    ]:
        html = client.get(page).content.decode()
        assert script not in html, page
        assert "&lt;script&gt;alert(&#x27;museum&#x27;)&lt;/script&gt;" in html, page


# Ids: not UUIDs, traversal, unknown

BAD_IDS = [
    "not-a-uuid",
    "1",
    "..%2F..%2Fetc%2Fpasswd",
    "..%2F..%2Fadmin",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "00000000-0000-0000-0000-000000000000",
    "00000000-0000-0000-0000-00000000000g",
    "%00",
    quote("' OR '1'='1"),
    quote("\U0001f600"),
    "a" * 5000,
]


@pytest.mark.parametrize("event_id", BAD_IDS)
def test_ids_that_name_no_event_are_a_404(world, event_id):
    staff = client_for(world["staff"])
    url = f"/v1.1/special-events/{event_id}"
    before = database_state()

    for method, body in [("GET", None), ("PATCH", {"name": "x"}), ("DELETE", None)]:
        response = staff.generic(method, url, json.dumps(body), content_type="application/json")
        assert_problem(response, 404)
    assert_problem(staff.get(f"/v1.1/tickets/{event_id}/qr"), 404)
    assert database_state() == before


@pytest.mark.parametrize(
    "path", ["/v1.1/special-events/../../etc/passwd", "/v1.1/tickets/../../etc/passwd/qr"]
)
def test_literal_path_traversal_is_a_404_problem(world, path):
    assert_problem(client_for(world["staff"]).get(path), 404)


@pytest.mark.parametrize(
    "event_id, status, field",
    [
        ("../../etc/passwd", 400, "eventId"),
        ("not-a-uuid", 400, "eventId"),
        (12, 400, "eventId"),
        ("00000000-0000-0000-0000-000000000000", 404, None),
    ],
)
def test_event_ids_in_a_purchase_that_name_no_event_are_refused(world, event_id, status, field):
    visitor = client_for(world["visitor"])
    body = {
        "ticketType": "event",
        "eventId": event_id,
        "ticketDate": days_from_today(3).isoformat(),
        "email": "ada@example.com",
    }
    before = database_state()

    problem = assert_problem(visitor.post("/v1.1/tickets", body, format="json"), status)

    assert (field in problem["errors"]) if field else problem["reason"] == "unknown_event"
    assert database_state() == before


@pytest.mark.parametrize(
    "code, reason",
    [
        ("ticket-\U0001f3a8", "unknown_ticket"),
        ("ticket-general-abcdef-12345' OR '1'='1", "unknown_ticket"),
        ("\U0001f3a8", "unknown_code"),
        ("MT1.\U0001f3a8", "forged"),
        ("MT1." + "A" * 300, "forged"),
        ("MT1.====", "forged"),
        ("<script>", "unknown_code"),
    ],
)
def test_scanned_codes_that_are_no_ticket_are_refused(world, code, reason):
    staff = client_for(world["staff"])
    before = database_state()

    problem = assert_problem(
        staff.post("/v1.1/tickets/check-in", {"code": code}, format="json"),
        (404 if reason.startswith("unknown_") else 400),
    )

    assert problem["reason"] == reason
    assert database_state() == before


@pytest.mark.parametrize(
    "field, value",
    [
        ("email", "\U0001f3a8@example.com"),
        ("email", "ada@exa\nmple.com"),
        ("email", "a" * 250 + "@example.com"),
        ("phone", "+\u0663\u0661 \u0662\u0660 \u0661\u0662\u0663 \u0664\u0665\u0666\u0667"),
        ("phone", "１２３４５６７８"),
        ("phone", "+1 (234) 567-8910; DROP TABLE"),
        ("ticketType", "EVENT"),
        ("ticketType", "general\x00"),
    ],
)
def test_purchase_fields_outside_their_shape_are_refused(world, field, value):
    visitor = client_for(world["visitor"])
    body = {
        "ticketType": "general",
        "ticketDate": days_from_today(3).isoformat(),
        "email": "ada@example.com",
        field: value,
    }
    before = database_state()

    problem = assert_problem(visitor.post("/v1.1/tickets", body, format="json"), 400)

    assert field in problem["errors"]
    assert database_state() == before


# Query parameters of both lists

LISTS = {
    "/v1.1/special-events": ["startDate", "endDate", "page", "limit"],
    "/v1.1/museum-hours": ["startDate", "page", "limit"],
}
HOSTILE_QUERY_VALUES = [
    "",
    "abc",
    "0000-01-01",
    "2023-02-29",
    "2024-1-1",
    "-1",
    "0",
    "1.0",
    "1e3",
    "+1",
    " 1",
    "１",
    "\u0661",
    "0x10",
    "9" * 5000,
    "\x00",
    "\U0001f600",
    "' OR 1=1 --",
    "<script>alert(1)</script>",
    "1; DROP TABLE hours_museumday",
]


@pytest.mark.parametrize("url, parameter", [(u, p) for u, ps in LISTS.items() for p in ps])
def test_hostile_query_values_are_a_400_naming_the_parameter(world, url, parameter):
    staff = client_for(world["staff"])
    for value in HOSTILE_QUERY_VALUES:
        response = staff.get(url, {parameter: value})
        problem = assert_problem(response, 400)
        assert list(problem["errors"]) == [parameter], (value, problem)


def test_a_lone_surrogate_in_a_query_string_is_a_400(world):
    staff = client_for(world["staff"])
    for url, parameters in LISTS.items():
        for parameter in parameters:
            response = staff.get(f"{url}?{parameter}=%ED%A0%80")
            assert list(assert_problem(response, 400)["errors"]) == [parameter]


@pytest.mark.parametrize("url", LISTS)
def test_a_huge_page_number_is_an_empty_page(world, url):
    response = client_for(world["staff"]).get(url, {"page": "9" * 900})

    assert response.status_code == 200 and response.json() == []


# Property: any values of startDate, endDate, page and limit


# Absent, valid (most often where the data is), near-valid, or any text a URL can carry.
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
NEAR_DAYS = st.dates(days_from_today(-400), days_from_today(400))
DATES = st.one_of(
    st.none(),
    NEAR_DAYS.map(dt.date.isoformat),
    st.dates().map(dt.date.isoformat),
    st.from_regex(r"\A[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\Z"),
    ANY_TEXT,
)
NUMBERS = st.one_of(
    st.none(),
    st.none(),
    st.integers(1, 4).map(str),
    st.integers(1, 4).map(str),
    st.integers(-3, 40).map(str),
    st.integers(0, 10**20).map(str),
    ANY_TEXT,
)


@st.composite
def date_ranges(draw) -> tuple[str | None, str | None]:
    """startDate and endDate; half the time an end shortly after a start near the data."""
    if draw(st.booleans()):
        return draw(DATES), draw(DATES)
    start = draw(NEAR_DAYS)
    return start.isoformat(), (start + dt.timedelta(draw(st.integers(-3, 370)))).isoformat()


ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def as_date(value: str | None):
    """The oracle's reading of a date parameter: None (absent), a date, or False (invalid)."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value) if ISO_DATE.fullmatch(value) else False
    except ValueError:
        return False


def as_number(value: str | None, default: int, low: int, high: int | None):
    if value is None:
        return default
    if not re.fullmatch(r"-?[0-9]+", value):
        return False
    number = int(value)
    return number if low <= number and (high is None or number <= high) else False


def expected_range(start_text, end_text):
    """(start, end) or the set of fields the service must name in its 400."""
    start, end = as_date(start_text), as_date(end_text)
    if bad := {name for name, value in [("startDate", start), ("endDate", end)] if value is False}:
        return bad
    start = start or timezone.localdate()
    week_later = dt.date.fromordinal(
        min(start.toordinal() + DEFAULT_RANGE_DAYS, dt.date.max.toordinal())
    )
    end = end or week_later
    if end < start or (end - start).days > MAX_RANGE_DAYS:
        return {"endDate"}
    return start, end


def expected_page(page_text, limit_text):
    page = as_number(page_text, 1, 1, None)
    limit = as_number(limit_text, DEFAULT_LIMIT, 1, MAX_LIMIT)
    if bad := {name for name, value in [("page", page), ("limit", limit)] if value is False}:
        return bad
    return page, limit


def assert_page(response, seen: list, everything: list, page: int, limit: int) -> None:
    """What the page shows is its slice of everything; the headers agree."""
    offset, total = (page - 1) * limit, len(everything)
    assert seen == everything[offset : offset + limit]
    assert len(seen) <= limit
    assert response["X-Total-Count"] == str(total)
    links = response.get("Link", "")
    assert ('rel="next"' in links) == (page * limit < total)
    assert ('rel="prev"' in links) == (page > 1 and (page - 2) * limit < total)


PROPERTY = hypothesis_settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def programme(db, settings):
    """Events spread over two years, some on the calendar's first and last days."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "1000000/min", "anon": "60/min"},
    }
    for number in range(40):
        first = days_from_today(number * 17 - 300)
        SpecialEventFactory(
            name=f"Event {number % 7}", dates={first, first + dt.timedelta(days=number % 5)}
        )
    SpecialEventFactory(name="Edges", dates=[dt.date.min, dt.date.max])
    for number in range(60):
        MuseumDayFactory(date=days_from_today(number * 9 - 200), closes_at=dt.time(18))
    return client_for(partner_member(username="visitor"))


def events_in(start: dt.date, end: dt.date) -> list[dict]:
    """The events list the contract describes, worked out in Python rather than by the query."""
    rows = []
    for event in SpecialEvent.objects.active().prefetch_related("dates"):
        dates = sorted(slot.date for slot in event.dates.all())
        if in_range := [day for day in dates if start <= day <= end]:
            rows.append((in_range[0], event.name, str(event.pk), [d.isoformat() for d in dates]))
    rows.sort()
    return [row[2] for row in rows]


@PROPERTY
@given(date_range=date_ranges(), page=NUMBERS, limit=NUMBERS)
def test_any_event_query_is_a_400_naming_its_fields_or_the_right_page(
    programme, date_range, page, limit
):
    start, end = date_range
    query = {
        k: v
        for k, v in [("startDate", start), ("endDate", end), ("page", page), ("limit", limit)]
        if v is not None
    }

    response = programme.get("/v1.1/special-events", query)

    # The range is read before the page, so its errors come first.
    in_range, paging = expected_range(start, end), expected_page(page, limit)
    for errors in [in_range, paging]:
        if isinstance(errors, set):
            assert set(assert_problem(response, 400)["errors"]) == errors
            return
    assert response.status_code == 200, response.content
    first, last = (day.isoformat() for day in in_range)
    seen = [event["eventId"] for event in response.json()]
    assert_page(response, seen, events_in(*in_range), *paging)
    for event in response.json():
        assert any(first <= day <= last for day in event["dates"])


@PROPERTY
@given(start=DATES, page=NUMBERS, limit=NUMBERS)
def test_any_hours_query_is_a_400_naming_its_fields_or_the_right_page(
    programme, start, page, limit
):
    query = {
        k: v for k, v in [("startDate", start), ("page", page), ("limit", limit)] if v is not None
    }

    response = programme.get("/v1.1/museum-hours", query)

    first = as_date(start)
    paging = expected_page(page, limit)
    if first is False:
        assert set(assert_problem(response, 400)["errors"]) == {"startDate"}
        return
    if isinstance(paging, set):
        assert set(assert_problem(response, 400)["errors"]) == paging
        return
    first = first or timezone.localdate()
    days = [
        {"date": day.date.isoformat(), "timeOpen": "09:00", "timeClose": "18:00"}
        for day in sorted(MuseumDay.objects.all(), key=lambda day: day.date)
        if not day.is_closed and day.date >= first
    ]
    assert response.status_code == 200, response.content
    assert_page(response, response.json(), days, *paging)
