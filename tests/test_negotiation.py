"""Every Accept header a client generated from the contract may send gets the operation's answer.

Such a client sends the media types of the operation's responses: only `application/problem+json`
for deleteSpecialEvent (its 204 has no body), `image/png` or `application/problem+json` for the
ticket image. A success the client cannot take in any type it named still comes in its own type
(RFC 9110 section 12.5.1), never 406; every error is application/problem+json; and the 401 or 403
answers before negotiation could refuse anything.
"""

import datetime as dt
import uuid
from dataclasses import dataclass, field

import pytest
from django.utils import timezone
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from museum.renderers import MuseumContentNegotiation, MuseumJSONRenderer, PNGRenderer
from tests import contract
from tests.conftest import basic_auth, client_for
from tests.factories import MuseumDayFactory, SpecialEventFactory, TicketFactory

PROBLEM = "application/problem+json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
OPERATIONS = contract.operations()

# What a generated client sends (one media type of the operation's responses, or a list of
# them), what other clients send (q-values, wildcards, nothing), and a type nothing renders.
ACCEPTS = [
    None,
    "*/*",
    *contract.media_types(),
    "application/json, application/problem+json",
    "image/png, application/problem+json",
    "application/problem+json;q=0.9, application/json;q=0.1, */*;q=0.01",
    "image/png;q=1.0, application/json;q=0.5",
    "image/*",
    "text/html",
    "text/html, application/xhtml+xml;q=0.9",
]


def later(days: int = 3) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


@dataclass
class Call:
    """One request to an operation: who sends it, to which URL, with which body."""

    url: str
    body: dict | None = None
    staff: bool = False
    expected_error: int = 400
    extra: dict = field(default_factory=dict)


@pytest.fixture
def scene(visitor, staff):
    day = later()
    MuseumDayFactory(date=day)
    event = SpecialEventFactory(dates=[day])
    ticket = TicketFactory(buyer=visitor, date=day)
    return {"day": day, "event": event, "ticket": ticket}


def calls(scene) -> dict[str, tuple[Call, Call]]:
    """Each operation of the contract: a request that succeeds, and one that is refused."""
    day = scene["day"].isoformat()
    event_url = f"/v1.1/special-events/{scene['event'].pk}"
    unknown = uuid.uuid4()
    new_event = {
        "name": "Night at the museum",
        "location": "Great Hall",
        "eventDescription": "Torches.",
        "dates": [day],
        "price": 20,
    }
    ticket = {"ticketType": "general", "ticketDate": day, "email": "ada@example.com"}
    yesterday = (timezone.localdate() - dt.timedelta(days=1)).isoformat()
    return {
        "getMuseumHours": (
            Call(f"/v1.1/museum-hours?startDate={day}"),
            Call("/v1.1/museum-hours?limit=0"),
        ),
        "createSpecialEvent": (
            Call("/v1.1/special-events", new_event, staff=True),
            Call("/v1.1/special-events", {**new_event, "price": -1}, staff=True),
        ),
        "listSpecialEvents": (
            Call(f"/v1.1/special-events?startDate={day}&endDate={day}"),
            Call("/v1.1/special-events?limit=0"),
        ),
        "getSpecialEvent": (
            Call(event_url),
            Call(f"/v1.1/special-events/{unknown}", expected_error=404),
        ),
        "updateSpecialEvent": (
            Call(event_url, {"name": "Renamed"}, staff=True),
            Call(event_url, {"price": -1}, staff=True),
        ),
        "deleteSpecialEvent": (
            Call(event_url, staff=True),
            Call(f"/v1.1/special-events/{unknown}", staff=True, expected_error=404),
        ),
        "buyMuseumTickets": (
            Call("/v1.1/tickets", ticket),
            Call("/v1.1/tickets", {**ticket, "ticketDate": yesterday}),
        ),
        "getTicketCode": (
            Call(f"/v1.1/tickets/{scene['ticket'].pk}/qr"),
            Call(f"/v1.1/tickets/{unknown}/qr", expected_error=404),
        ),
    }


def send(client, operation: contract.Operation, call: Call, accept: str | None):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    return getattr(client, operation.method)(call.url, call.body, format="json", **headers)


def media_type(response) -> str | None:
    content_type = response.headers.get("Content-Type")
    return content_type and content_type.split(";")[0].strip()


def assert_problem(response, status: int):
    assert response.status_code == status, response.content
    assert media_type(response) == PROBLEM
    assert response.json()["status"] == status


@pytest.fixture(params=sorted(OPERATIONS))
def operation(request):
    return OPERATIONS[request.param]


def test_every_operation_of_the_contract_is_covered(scene):
    assert set(calls(scene)) == set(OPERATIONS)


@pytest.mark.parametrize("accept", ACCEPTS)
def test_a_success_comes_in_the_operations_own_type(operation, accept, scene, visitor, staff):
    call, _ = calls(scene)[operation.operation_id]

    response = send(client_for(staff if call.staff else visitor), operation, call, accept)

    assert response.status_code == operation.success_status, response.content
    assert media_type(response) == operation.success_type
    if operation.success_type is None:
        assert response.content == b""
    elif operation.success_type == "image/png":
        assert response.content.startswith(PNG_SIGNATURE)
    else:
        response.json()


@pytest.mark.parametrize("accept", ACCEPTS)
def test_a_refusal_is_a_problem_whatever_the_accept(operation, accept, scene, visitor, staff):
    _, call = calls(scene)[operation.operation_id]

    response = send(client_for(staff if call.staff else visitor), operation, call, accept)

    assert_problem(response, call.expected_error)


@pytest.mark.parametrize("accept", ACCEPTS)
def test_a_wrong_password_is_401_whatever_the_accept(operation, accept, scene, anonymous_client):
    call, _ = calls(scene)[operation.operation_id]
    username = "staff" if call.staff else "visitor"
    anonymous_client.credentials(HTTP_AUTHORIZATION=basic_auth(username, "wrong password"))

    response = send(anonymous_client, operation, call, accept)

    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Basic")


@pytest.mark.parametrize("accept", ACCEPTS)
def test_a_visitor_on_a_staff_operation_is_403_whatever_the_accept(accept, scene, visitor):
    staff_calls = [
        (OPERATIONS[operation_id], call)
        for operation_id, (call, _) in calls(scene).items()
        if call.staff
    ]
    assert staff_calls

    for operation, call in staff_calls:
        assert_problem(send(client_for(visitor), operation, call, accept), 403)


# The negotiation itself


RENDERER_LISTS = [[MuseumJSONRenderer()], [MuseumJSONRenderer(), PNGRenderer()]]


def request_accepting(accept: str | None) -> Request:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    return Request(APIRequestFactory().get("/v1.1/museum-hours", **headers))


@pytest.mark.parametrize("renderers", RENDERER_LISTS)
@pytest.mark.parametrize(
    "accept", [None, "*/*", "application/json", "image/png", "image/*", "text/html", ""]
)
def test_drfs_renderer_where_drf_finds_one_else_the_views_first(accept, renderers):
    try:
        expected = DefaultContentNegotiation().select_renderer(request_accepting(accept), renderers)
    except NotAcceptable:
        expected = renderers[0], renderers[0].media_type

    renderer, media = MuseumContentNegotiation().select_renderer(
        request_accepting(accept), renderers
    )

    assert (type(renderer), media) == (type(expected[0]), expected[1])


def test_asking_only_for_html_gets_json(visitor_client):
    response = visitor_client.get("/v1.1/museum-hours", HTTP_ACCEPT="text/html")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
