"""Clients generated from the contract by two well-kept generators drive the whole API.

Both are generated at test time from the repository's copy of the contract, into a temporary
folder: openapi-python-client (httpx, sends no Accept of its own) and OpenAPI Generator's `python`
client (urllib3 and pydantic; it sends the operation's response media types as Accept, e.g. only
`application/problem+json` for deleteSpecialEvent). Each runs against a live server: opening
hours, an event's life as staff, both kinds of ticket and their images, and the refusals.
"""

import base64
import datetime as dt
import importlib
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from tests.conftest import staff_member
from tests.contract import CONTRACT
from tests.factories import PASSWORD, MuseumDayFactory, partner_member

BIN = Path(sys.executable).parent
PROBLEM = "application/problem+json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
GENERATOR_TIMEOUT_SECONDS = 300
# OpenAPI Generator (the openapi-generator-cli package) runs its bundled jar on Java 11 or newer.
NEEDS_JAVA = pytest.mark.needs_tool("java")


def generate(command: list[str], what: str) -> str:
    """Runs a generator; its output (stdout and stderr), for the warnings it printed."""
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=GENERATOR_TIMEOUT_SECONDS, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{what} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}", pytrace=False)
    return f"{done.stdout}\n{done.stderr}"


def generate_httpx_client(spec: Path, output: Path, config: str = "") -> str:
    """openapi-python-client's package from `spec` at `output` (its name the folder's)."""
    config_file = output.with_suffix(".yaml")
    # Its default post-generation hook runs ruff over the code; the test does not need it.
    config_file.write_text(f"post_hooks: []\n{config}")
    command = [str(BIN / "openapi-python-client"), "generate", "--path", str(spec)]
    command += ["--config", str(config_file), "--meta", "none", "--output-path", str(output)]
    return generate(command, "openapi-python-client")


def generate_urllib3_client(spec: Path, output: Path, package: str) -> str:
    """OpenAPI Generator's `python` package `package` from `spec`, in the folder `output` (the
    test that calls it is `NEEDS_JAVA`)."""
    command = [str(BIN / "openapi-generator-cli"), "generate", "-g", "python"]
    command += ["-i", str(spec), "-o", str(output), "--package-name", package]
    # The code and nothing else: no tests or docs of its own.
    skipped = "apiTests=false,modelTests=false,apiDocs=false,modelDocs=false"
    command += ["--global-property", skipped]
    return generate(command, "OpenAPI Generator")


@pytest.fixture(scope="session")
def generated_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("generated_clients")
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))


@pytest.fixture(scope="session")
def openapi_python_client(generated_folder):
    generate_httpx_client(CONTRACT, generated_folder / "museum_api_httpx")
    return importlib.import_module("museum_api_httpx")


@pytest.fixture(scope="session")
def openapi_generator(generated_folder):
    output = generated_folder / "openapi-generator"
    generate_urllib3_client(CONTRACT, output, "museum_api_urllib3")
    sys.path.insert(0, str(output))
    yield importlib.import_module("museum_api_urllib3")
    sys.path.remove(str(output))


@dataclass
class Answer:
    status: int
    content_type: str
    data: Any  # what the client parsed, as JSON-like data; the bytes for an image
    body: bytes


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip()


class HttpxDriver:
    """openapi-python-client's functions, one module per operation."""

    def __init__(self, package, url: str, username: str, password: str):
        self.package = package
        credentials = base64.b64encode(f"{username}:{password}".encode()).decode()
        self.client = package.AuthenticatedClient(base_url=url, token=credentials, prefix="Basic")
        self.models = importlib.import_module(f"{package.__name__}.models")

    def _call(self, tag: str, operation: str, **kwargs) -> Answer:
        module = importlib.import_module(f"{self.package.__name__}.api.{tag}.{operation}")
        response = module.sync_detailed(client=self.client, **kwargs)
        parsed = response.parsed
        if isinstance(parsed, list):
            parsed = [item.to_dict() for item in parsed]
        elif hasattr(parsed, "to_dict"):
            parsed = parsed.to_dict()
        content_type = response.headers.get("Content-Type", "")
        if media_type(content_type) == "image/png":  # the generator has no image type
            parsed = response.content
        return Answer(int(response.status_code), content_type, parsed, response.content)

    def museum_hours(self, start: dt.date) -> Answer:
        return self._call("operations", "get_museum_hours", start_date=start)

    def create_event(self, **fields) -> Answer:
        body = self.models.CreateSpecialEventRequest.from_dict(fields)
        return self._call("events", "create_special_event", body=body)

    def list_events(self, start: dt.date, end: dt.date) -> Answer:
        return self._call("events", "list_special_events", start_date=start, end_date=end)

    def get_event(self, event_id: uuid.UUID) -> Answer:
        return self._call("events", "get_special_event", event_id=event_id)

    def update_event(self, event_id: uuid.UUID, **fields) -> Answer:
        body = self.models.UpdateSpecialEventRequest.from_dict(fields)
        return self._call("events", "update_special_event", event_id=event_id, body=body)

    def delete_event(self, event_id: uuid.UUID) -> Answer:
        return self._call("events", "delete_special_event", event_id=event_id)

    def buy_ticket(self, **fields) -> Answer:
        body = self.models.BuyMuseumTicketsRequest.from_dict(fields)
        return self._call("tickets", "buy_museum_tickets", body=body)

    def ticket_image(self, ticket_id: uuid.UUID) -> Answer:
        return self._call("tickets", "get_ticket_code", ticket_id=ticket_id)

    def close(self):
        self.client.get_httpx_client().close()


class Urllib3Driver:
    """OpenAPI Generator's API classes, one per tag, raising ApiException for any error."""

    def __init__(self, package, url: str, username: str, password: str):
        self.package = package
        configuration = package.Configuration(host=url, username=username, password=password)
        self.client = package.ApiClient(configuration)
        self.operations = package.OperationsApi(self.client)
        self.events = package.EventsApi(self.client)
        self.tickets = package.TicketsApi(self.client)

    def _call(self, method, *args, **kwargs) -> Answer:
        try:
            response = method(*args, **kwargs)
        except self.package.ApiException as error:
            data = error.data.model_dump(mode="json", by_alias=True) if error.data else None
            content_type = (error.headers or {}).get("Content-Type", "")
            body = error.body.encode() if isinstance(error.body, str) else error.body or b""
            return Answer(error.status, content_type, data, body)
        data = response.data
        if isinstance(data, list):
            data = [item.model_dump(mode="json", by_alias=True) for item in data]
        elif hasattr(data, "model_dump"):
            data = data.model_dump(mode="json", by_alias=True)
        content_type = (response.headers or {}).get("Content-Type", "")
        return Answer(response.status_code, content_type, data, response.raw_data)

    def museum_hours(self, start: dt.date) -> Answer:
        return self._call(self.operations.get_museum_hours_with_http_info, start_date=start)

    def create_event(self, **fields) -> Answer:
        body = self.package.CreateSpecialEventRequest.from_dict(fields)
        return self._call(self.events.create_special_event_with_http_info, body)

    def list_events(self, start: dt.date, end: dt.date) -> Answer:
        method = self.events.list_special_events_with_http_info
        return self._call(method, start_date=start, end_date=end)

    def get_event(self, event_id: uuid.UUID) -> Answer:
        return self._call(self.events.get_special_event_with_http_info, event_id)

    def update_event(self, event_id: uuid.UUID, **fields) -> Answer:
        body = self.package.UpdateSpecialEventRequest.from_dict(fields)
        return self._call(self.events.update_special_event_with_http_info, event_id, body)

    def delete_event(self, event_id: uuid.UUID) -> Answer:
        return self._call(self.events.delete_special_event_with_http_info, event_id)

    def buy_ticket(self, **fields) -> Answer:
        body = self.package.BuyMuseumTicketsRequest.from_dict(fields)
        return self._call(self.tickets.buy_museum_tickets_with_http_info, body)

    def ticket_image(self, ticket_id: uuid.UUID) -> Answer:
        return self._call(self.tickets.get_ticket_code_with_http_info, ticket_id)

    def close(self):
        # Its ApiClient has no close of its own; its connections live in the pool manager.
        self.client.rest_client.pool_manager.clear()


DRIVERS = {"openapi-python-client": HttpxDriver, "openapi-generator": Urllib3Driver}


def connecting(request, live_server, drivers: dict):
    """What a `connect` fixture yields: connect(username, password=PASSWORD) signs the generated
    client `request.param` names (its driver in `drivers`) in to the live server; each is closed
    after the test."""
    package = request.getfixturevalue(request.param.replace("-", "_"))
    opened = []

    def connect(username: str, password: str = PASSWORD):
        driver = drivers[request.param](package, f"{live_server.url}/v1.1", username, password)
        opened.append(driver)
        return driver

    yield connect
    for driver in opened:
        driver.close()


@pytest.fixture(
    params=["openapi-python-client", pytest.param("openapi-generator", marks=NEEDS_JAVA)]
)
def connect(request, live_server):
    yield from connecting(request, live_server, DRIVERS)


def assert_success(answer: Answer, status: int, content_type: str = "application/json") -> Any:
    assert answer.status == status, answer.body[:500]
    assert media_type(answer.content_type) == content_type
    return answer.data


def assert_problem(answer: Answer, status: int) -> None:
    assert answer.status == status, answer.body[:500]
    assert media_type(answer.content_type) == PROBLEM


@pytest.fixture
def accounts(transactional_db):
    staff_member(username="staff")
    partner_member(username="visitor")


def test_a_generated_client_drives_the_whole_flow(connect, accounts):
    day = timezone.localdate() + dt.timedelta(days=3)
    MuseumDayFactory(date=day, closes_at=dt.time(18))
    staff, visitor = connect("staff"), connect("visitor")

    hours = assert_success(visitor.museum_hours(day), 200)
    assert hours == [{"date": day.isoformat(), "timeOpen": "09:00", "timeClose": "18:00"}]

    new_event = {
        "name": "Pirate Coding Workshop",
        "location": "Computer Room",
        "eventDescription": "Captain Blackbeard shares his love of the C language.",
        "dates": [day.isoformat()],
        "price": 25,
    }
    event = assert_success(staff.create_event(**new_event), 201)
    event_id = uuid.UUID(event["eventId"])
    assert {key: event[key] for key in new_event} == new_event
    listed = assert_success(visitor.list_events(day, day), 200)
    assert [item["eventId"] for item in listed] == [event["eventId"]]
    assert assert_success(visitor.get_event(event_id), 200) == event
    renamed = assert_success(staff.update_event(event_id, name="Pirate Coding, Again"), 200)
    assert renamed == {**event, "name": "Pirate Coding, Again"}

    purchase = {"ticketDate": day.isoformat(), "email": "ada@example.com"}
    general = assert_success(visitor.buy_ticket(ticketType="general", **purchase), 201)
    for_event = assert_success(
        visitor.buy_ticket(ticketType="event", eventId=str(event_id), **purchase), 201
    )
    assert (general["ticketType"], for_event["ticketType"]) == ("general", "event")
    assert for_event["eventName"] == "Pirate Coding, Again"
    for ticket in (general, for_event):
        image = assert_success(visitor.ticket_image(ticket["ticketId"]), 200, "image/png")
        assert image.startswith(PNG_SIGNATURE)

    assert_success(staff.delete_event(event_id), 204, "")


def test_a_generated_client_gets_every_refusal_as_a_problem(connect, accounts):
    day = timezone.localdate() + dt.timedelta(days=3)
    staff, visitor = connect("staff"), connect("visitor")
    event = {"name": "Night", "location": "Hall", "eventDescription": "Torches.", "price": 5}
    event["dates"] = [day.isoformat()]
    event_id = uuid.UUID(assert_success(staff.create_event(**event), 201)["eventId"])

    wrong_password = connect("staff", password="not the password")
    assert_problem(wrong_password.museum_hours(day), 401)
    assert_problem(wrong_password.delete_event(event_id), 401)
    assert_problem(wrong_password.ticket_image(uuid.uuid4()), 401)

    assert_problem(visitor.create_event(**event), 403)
    assert_problem(visitor.delete_event(event_id), 403)

    assert_problem(visitor.get_event(uuid.uuid4()), 404)
    assert_problem(staff.delete_event(uuid.uuid4()), 404)
    assert_problem(visitor.ticket_image(uuid.uuid4()), 404)

    refused = staff.create_event(**{**event, "price": -1})
    assert_problem(refused, 400)
    assert refused.data["type"] == "urn:museum:problem:validation_error"
    assert "price" in refused.body.decode()
