"""Authentication, the role matrix and the problem+json shape shared by every operation."""

import pytest
from rest_framework.test import APIClient

from tests.conftest import EVENT, assert_problem, basic_auth
from tests.factories import SpecialEventFactory, UserFactory, staff_member


def operations(event_id):
    """Every operation of the contract so far, with a request that would otherwise succeed."""
    return [
        ("get", "/v1.1/museum-hours", None),
        ("get", "/v1.1/special-events", None),
        ("post", "/v1.1/special-events", EVENT),
        ("get", f"/v1.1/special-events/{event_id}", None),
        ("patch", f"/v1.1/special-events/{event_id}", {"name": "Renamed"}),
        ("delete", f"/v1.1/special-events/{event_id}", None),
    ]


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        basic_auth("visitor", "wrong password"),
        basic_auth("nobody"),
        basic_auth("vis\x00itor"),
        "Basic not-base64!",
        "Basic " + "gA==",  # not UTF-8 once decoded
        "Bearer abc",
    ],
)
def test_every_operation_needs_valid_basic_credentials(visitor, authorization):
    event = SpecialEventFactory()
    client = APIClient()
    if authorization:
        client.credentials(HTTP_AUTHORIZATION=authorization)

    for method, url, body in operations(event.pk):
        response = getattr(client, method)(url, body, format="json")
        assert_problem(response, 401)
        assert response["WWW-Authenticate"] == 'Basic realm="museum"'


def test_an_inactive_account_is_refused(db):
    UserFactory(username="gone", is_active=False)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=basic_auth("gone"))

    assert_problem(client.get("/v1.1/museum-hours"), 401)


ROLE_MATRIX = {
    # operation index -> (visitor status, staff status)
    0: (200, 200),
    1: (200, 200),
    2: (403, 201),
    3: (200, 200),
    4: (403, 200),
    5: (403, 204),
}


@pytest.mark.parametrize("role", ["visitor", "staff"])
def test_visitors_read_and_staff_manage(db, role):
    user = staff_member(username=role) if role == "staff" else UserFactory(username=role)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=basic_auth(user.username))
    event = SpecialEventFactory()

    for index, (method, url, body) in enumerate(operations(event.pk)):
        expected = ROLE_MATRIX[index][role == "staff"]
        response = getattr(client, method)(url, body, format="json")
        assert response.status_code == expected, (method, url, response.content)
        if expected == 403:
            assert_problem(response, 403)


def test_malformed_json_is_a_400_problem(staff_client):
    response = staff_client.post(
        "/v1.1/special-events", '{"name": "x",', content_type="application/json"
    )

    assert assert_problem(response, 400)["code"] == "parse_error"


@pytest.mark.parametrize("body", ['{"price": NaN}', '{"price": Infinity}', "[1, 2]", '"text"'])
def test_json_that_is_not_an_event_object_is_a_400(staff_client, body):
    response = staff_client.post("/v1.1/special-events", body, content_type="application/json")

    assert_problem(response, 400)


def test_a_body_that_is_not_json_is_a_415_problem(staff_client):
    response = staff_client.post("/v1.1/special-events", "name=x", content_type="text/plain")

    assert_problem(response, 415)


def test_unknown_paths_under_the_api_are_a_404_problem(visitor_client):
    problem = assert_problem(visitor_client.get("/v1.1/no-such-thing"), 404)

    assert "/v1.1/no-such-thing" in problem["detail"]


def test_a_wrong_method_is_a_405_problem(visitor_client):
    assert_problem(visitor_client.delete("/v1.1/museum-hours"), 405)


def test_pages_outside_the_api_keep_django_error_pages(client, db):
    response = client.get("/no-such-page")

    assert response.status_code == 404
    assert "problem" not in response["Content-Type"]


@pytest.mark.parametrize(
    "url, parameter",
    [
        *[("/v1.1/museum-hours", name) for name in ["startDate", "page", "limit"]],
        *[("/v1.1/special-events", name) for name in ["startDate", "endDate", "page", "limit"]],
    ],
)
def test_an_empty_query_parameter_is_a_400_not_the_default(visitor_client, url, parameter):
    # Found by schemathesis: `?startDate=` was read as "no startDate".
    response = visitor_client.get(url, {parameter: ""})

    assert response.status_code == 400
    assert parameter in response.json()["errors"]


@pytest.mark.parametrize(
    "url, field",
    [
        ("/v1.1/tickets", "ticketType"),
        ("/v1.1/tickets/check-in", "code"),
        ("/v1.1/special-events", "name"),
    ],
)
def test_options_describes_what_a_post_takes(staff_client, url, field):
    # Found by schemathesis: OPTIONS on the ticket routes was a 500.
    response = staff_client.options(url)

    assert response.status_code == 200
    assert field in response.json()["actions"]["POST"]


@pytest.mark.parametrize(
    "url",
    [
        "/v1.1/museum-hours?start_date=2030-01-01",
        "/v1.1/special-events?page=1&sort=name",
        "/v1.1/special-events/6744a0da-4121-49cd-8479-f8cc20526495?expand=dates",
        "/v1.1/tickets/6744a0da-4121-49cd-8479-f8cc20526495/qr?format=png",
    ],
)
def test_a_query_parameter_the_operation_does_not_take_is_a_400(visitor_client, url):
    # Found by schemathesis: unknown parameters were ignored, so a typo read as "no filter".
    response = visitor_client.get(url)

    problem = assert_problem(response, 400)
    assert set(problem["errors"]) & {"start_date", "sort", "expand", "format"}


def test_a_patch_without_a_body_is_a_400(staff_client):
    # Found by schemathesis: the contract requires a body; an empty one changed nothing, silently.
    event = SpecialEventFactory()

    response = staff_client.generic("PATCH", f"/v1.1/special-events/{event.pk}")

    assert assert_problem(response, 400)["code"] == "parse_error"
