"""Any input at every /octo/ operation: arbitrary JSON bodies, near-valid bodies with any member
replaced by any JSON value, any path ids and any OCTO headers. The answer is never a 5xx: a
body the service cannot read is OCTO's BAD_REQUEST, a refusal of the sale OCTO's error."""

import json
from urllib.parse import quote

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from orders.models import Voucher
from tests.factories import SpecialEventFactory, partner_member
from tests.octo.conftest import B1, later, octo_client, reserve_body, slot_id, uid

# Values at the edges of what each field holds: the calendar's first and last moments, ids that
# are not ids, text at and past the lengths.
EDGES = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "0001-01-01",
    "9999-12-31",
    "2026-02-30",
    "a/b",
    "../",
    "general",
    "DEFAULT",
    "adult",
    "x" * 101,
    "x" * 5000,
    "",
    " ",
    -1,
    0,
    2**63,
    10**30,
    1.5,
    True,
    None,
    [],
    {},
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(EDGES),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def near(draw, valid: dict) -> dict:
    """A valid body with each member most often kept (a contact's and a unit item's members
    gone through alike), else replaced by any value or dropped: one wrong value among right
    ones reaches past the first check."""
    body = {}
    for key, value in valid.items():
        fate = draw(st.sampled_from(["keep"] * 5 + ["replace", "drop"]))
        if fate == "replace":
            body[key] = draw(JSON)
        elif fate == "keep" and isinstance(value, dict):
            body[key] = draw(near(value))
        elif fate == "keep" and isinstance(value, list) and value and isinstance(value[0], dict):
            body[key] = draw(st.lists(near(value[0]), min_size=1, max_size=3))
        elif fate == "keep":
            body[key] = value
    return body


DAY = later(3)
CONTACT = {
    "fullName": "Ada",
    "firstName": "Ada",
    "lastName": "Lovelace",
    "emailAddress": "ada@example.com",
    "phoneNumber": "+44 20 7946 0000",
    "locales": ["en"],
    "postalCode": "NW1",
    "country": "GB",
    "notes": "Step-free",
}
UNIT_ITEM = {"uuid": "u-1", "unitId": "adult", "resellerReference": "R-1"}
RESERVE = reserve_body(
    DAY,
    uuid=uid("any"),
    notes="n",
    resellerReference="R",
    expirationMinutes=30,
    contact=CONTACT,
    offerCode="SPRING",
) | {"unitItems": [UNIT_ITEM]}
CHANGE = {
    "contact": CONTACT,
    "notes": "n",
    "resellerReference": "R",
    "unitItems": [UNIT_ITEM],
    "availabilityId": slot_id(DAY, 11),
    "productId": "general",
    "optionId": "DEFAULT",
    "offerCode": "SPRING",
}
AVAILABILITY = {
    "productId": "general",
    "optionId": "DEFAULT",
    "localDateStart": DAY.isoformat(),
    "localDateEnd": DAY.isoformat(),
    "units": [{"id": "adult", "quantity": 2}],
    "offerCode": "SPRING",
}
AVAILABILITY_OF_IDS = {
    "productId": "general",
    "optionId": "DEFAULT",
    "availabilityIds": [slot_id(DAY, 10)],
    "units": [{"id": "adult", "quantity": 2}],
}
WEBHOOK = {"url": "https://example.com/hook", "event": "booking_update"}

# Each operation: method, path (`{id}` for a path id), a near-valid body.
OPERATIONS = [
    ("get", "/octo/supplier", None),
    ("get", "/octo/suppliers", None),
    ("get", "/octo/capabilities", None),
    ("get", "/octo/products", None),
    ("get", "/octo/products/{id}", None),
    ("post", "/octo/availability", AVAILABILITY),
    ("post", "/octo/availability", AVAILABILITY_OF_IDS),
    (
        "post",
        "/octo/availability",
        {"productId": "general", "optionId": "DEFAULT", "localDate": DAY.isoformat()},
    ),
    ("post", "/octo/availability/calendar", AVAILABILITY),
    ("get", "/octo/bookings", None),
    ("post", "/octo/bookings", RESERVE),
    ("get", "/octo/bookings/{id}", None),
    ("patch", "/octo/bookings/{id}", CHANGE),
    ("delete", "/octo/bookings/{id}", {"reason": "r"}),
    ("post", "/octo/bookings/{id}/confirm", CHANGE),
    ("post", "/octo/bookings/{id}/extend", {"expirationMinutes": 30}),
    ("post", "/octo/bookings/{id}/cancel", {"reason": "r"}),
    ("get", "/octo/webhooks", None),
    ("post", "/octo/webhooks", WEBHOOK),
    ("delete", "/octo/webhooks/{id}", None),
]
QUERY = st.dictionaries(
    st.sampled_from(
        ["resellerReference", "supplierReference", "localDate", "localDateStart", "localDateEnd"]
    ),
    st.text(max_size=20) | st.sampled_from([DAY.isoformat(), "0001-01-01", "9999-12-31"]),
    max_size=3,
)
PATH_IDS = st.sampled_from([B1, B1, uid("confirmed"), "general", "a/b"]) | st.text(min_size=1)
HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "HTTP_OCTO_CAPABILITIES": st.text(max_size=40)
        | st.sampled_from(
            ["octo/pricing", "octo/content, octo/pricing", "octo/offers, octo/pricing"]
        ),
        "HTTP_ACCEPT_LANGUAGE": st.text(max_size=30) | st.sampled_from(["de", "fr-CA", "*"]),
    },
)

PROPERTY = hypothesis_settings(
    max_examples=500,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def world(settings, partner, octo, timed_day):
    """A held booking (b-1), a confirmed one, an event on the day, a voucher OCTO may use
    (SPRING), and no request limit."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "1000000/min", "anon": "1000000/min"},
    }
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MUSEUM_WEBHOOK_ALLOW_HTTP = True
    SpecialEventFactory(dates=[timed_day.date])
    Voucher.objects.create(code="SPRING", effect="percent_off", value=20, max_uses=1000)
    assert octo.post("/octo/bookings", reserve_body(DAY), format="json").status_code == 200
    confirmed = reserve_body(DAY, uuid=uid("confirmed"), hour=11)
    assert octo.post("/octo/bookings", confirmed, format="json").status_code == 200
    octo.post(f"/octo/bookings/{uid('confirmed')}/confirm", {}, format="json")
    return octo


@st.composite
def requests(draw):
    method, path, valid = draw(st.sampled_from(OPERATIONS))
    if "{id}" in path:
        path = path.replace("{id}", quote(draw(PATH_IDS), safe=""))
    body = None
    if valid is not None:
        body = draw(st.one_of(near(valid), near(valid), JSON))
    query = draw(QUERY) if (method, path) == ("get", "/octo/bookings") else {}
    return method, path, body, query, draw(HEADERS)


def send(client, method: str, path: str, body, query: dict, headers: dict):
    if body is not None:
        return getattr(client, method)(
            path, json.dumps(body), content_type="application/json", **headers
        )
    if method == "get":
        return client.get(path, query, **headers)
    return getattr(client, method)(path, **headers)


@PROPERTY
@given(request=requests())
def test_no_input_gets_a_server_error(world, request):
    method, path, body, query, headers = request
    # Each example from the same bookings: its changes rolled back after it.
    with transaction.atomic():
        answer = send(world, method, path, body, query, headers)
        transaction.set_rollback(True)
    assert answer.status_code < 500, (method, path, body, answer.content[:500])
    if answer.status_code >= 400 and answer.status_code != 404:
        assert set(answer.json()) >= {"error", "errorMessage"}, answer.json()


@pytest.mark.parametrize(
    "path, body",
    [
        ("/octo/bookings", RESERVE | {"contact": {"emailAddress": ["ada@example.com"]}}),
        ("/octo/bookings", RESERVE | {"contact": {"fullName": {"a": 1}}}),
        (f"/octo/bookings/{B1}/confirm", {"contact": {"phoneNumber": 12}}),
        ("/octo/bookings", RESERVE | {"availabilityId": "0001-01-01T00:00:00+14:00"}),
        (
            "/octo/availability",
            {"productId": "general", "optionId": "DEFAULT", "localDate": "9999-12-31"},
        ),
        ("/octo/webhooks", {"url": "http://127.0.0.1:9/" + "x" * 500, "event": "booking_update"}),
        # Within MUSEUM_MAX_BODY_BYTES (a bigger body is a 413: test_api), past notes' limit.
        ("/octo/bookings", RESERVE | {"notes": "x" * 20_001}),
        ("/octo/bookings", RESERVE | {"uuid": "a/b"}),
    ],
)
def test_inputs_that_once_were_a_500_or_unbounded_are_refused(world, path, body):
    answer = world.post(path, body, format="json")
    assert answer.status_code == 400
    assert answer.json()["error"] in ("BAD_REQUEST", "INVALID_AVAILABILITY_ID"), answer.json()


def test_an_availability_id_at_the_calendars_edge_names_no_availability(world):
    edge = AVAILABILITY_OF_IDS | {"availabilityIds": ["0001-01-01T00:00:00+14:00"]}
    assert world.post("/octo/availability", edge, format="json").json() == []


@pytest.mark.parametrize(
    "body",
    [{"contact": {"emailAddress": 7}}, {"availabilityId": "0001-01-01T00:00:00+14:00"}],
)
def test_a_patch_with_a_value_it_cannot_read_is_a_bad_request(world, body):
    answer = world.patch(f"/octo/bookings/{B1}", body, format="json")
    assert answer.json()["error"] in ("BAD_REQUEST", "INVALID_AVAILABILITY_ID")
    assert answer.status_code == 400


def test_notes_longer_than_their_limit_are_refused_and_at_it_kept(world):
    at_limit = RESERVE | {"uuid": uid("long"), "notes": "x" * 2000}
    assert world.post("/octo/bookings", at_limit, format="json").json()["notes"] == "x" * 2000
    over = RESERVE | {"uuid": uid("longer"), "notes": "x" * 2001}
    assert world.post("/octo/bookings", over, format="json").json()["error"] == "BAD_REQUEST"


def test_two_resellers_use_the_same_uuid_without_clash_or_oracle(world, timed_day):
    other = octo_client(partner_member(username="other-reseller"))
    unknown = other.get(f"/octo/bookings/{B1}").json()
    assert unknown["error"] == "INVALID_BOOKING_UUID"
    mine = other.post("/octo/bookings", reserve_body(DAY, hour=11), format="json")
    assert mine.status_code == 200, mine.json()
    theirs = world.get(f"/octo/bookings/{B1}").json()
    assert mine.json()["uuid"] == theirs["uuid"] == B1
    assert mine.json()["id"] != theirs["id"]
    assert mine.json()["availabilityId"] != theirs["availabilityId"]


def test_a_uuid_is_answered_in_its_canonical_spelling_under_any(world):
    shouting = B1.upper()
    assert world.get(f"/octo/bookings/{shouting}").json()["uuid"] == B1
    again = world.post("/octo/bookings", reserve_body(DAY, uuid=shouting), format="json").json()
    assert again["uuid"] == B1
