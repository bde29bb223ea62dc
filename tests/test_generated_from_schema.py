"""Clients generated from OUR served schema (/v1.1/openapi.json), as tests/test_generated_clients.py
generates them from the contract: the schema is valid OpenAPI, neither generator skips or
half-generates an operation, and the order journey runs through each generated client.

The schema is fetched from the live server, as a client's generator would fetch it.
"""

import datetime as dt
import importlib
import json
import re
import sys
import urllib.request
import uuid

import pytest
from django.utils import timezone
from openapi_spec_validator import validate

from tests.factories import MuseumDayFactory, partner_member
from tests.test_generated_clients import (
    NEEDS_JAVA,
    HttpxDriver,
    Urllib3Driver,
    assert_success,
    connecting,
    generate_httpx_client,
    generate_urllib3_client,
)

PDF_SIGNATURE = b"%PDF-"
# openapi-python-client types application/octet-stream answers as bytes and refuses any other
# binary media type ("response will be omitted"), and any request body of a media type it does
# not know (a voucher import's text/csv); its documented remedy is this setting. The schema
# keeps the media types the server really sends and takes (application/pdf, image/png,
# text/csv, application/vnd.apple.pkpass).
HTTPX_CONFIG = """content_type_overrides:
  application/pdf: application/octet-stream
  application/vnd.apple.pkpass: application/octet-stream
  image/png: application/octet-stream
  text/csv: application/octet-stream
"""
# OpenAPI Generator's warnings that are not about our schema: the contract names a component
# `Date`, which the Python generator renames to ModelDate (clients from the contract get it too);
# and 7.26 prints "Failed to get the schema name: null" for any spec, even one operation
# answering a plain string.
NOT_OURS = [
    re.compile(r"Date \(reserved word\) cannot be used as model name"),
    re.compile(r"Failed to get the schema name: null$"),
]


@pytest.fixture(scope="session")
def served_schema(live_server, django_db_setup, django_db_blocker) -> dict:
    # The request passes the middleware, which may read the (test) database.
    with django_db_blocker.unblock():
        url = f"{live_server.url}/v1.1/openapi.json"
        with urllib.request.urlopen(url, timeout=30) as answer:
            return json.load(answer)


@pytest.fixture(scope="session")
def served_schema_file(served_schema, tmp_path_factory):
    path = tmp_path_factory.mktemp("served_schema") / "openapi.json"
    path.write_text(json.dumps(served_schema))
    return path


@pytest.fixture(scope="session")
def schema_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clients_from_schema")
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))


@pytest.fixture(scope="session")
def httpx_generation(served_schema_file, schema_folder) -> str:
    return generate_httpx_client(
        served_schema_file, schema_folder / "museum_schema_httpx", HTTPX_CONFIG
    )


@pytest.fixture(scope="session")
def urllib3_generation(served_schema_file, schema_folder) -> str:
    output = schema_folder / "openapi-generator"
    printed = generate_urllib3_client(served_schema_file, output, "museum_schema_urllib3")
    sys.path.insert(0, str(output))
    yield printed
    sys.path.remove(str(output))


def test_the_served_schema_is_valid_openapi(served_schema):
    validate(served_schema)


def test_openapi_python_client_generates_every_operation_without_a_warning(httpx_generation):
    # Its warnings: "Endpoint will not be generated", "response will be omitted", ...
    assert "Warning" not in httpx_generation, httpx_generation


@NEEDS_JAVA
def test_openapi_generator_generates_without_a_warning_of_ours(urllib3_generation):
    warnings = [
        line
        for line in urllib3_generation.splitlines()
        if " WARN " in line and not any(known.search(line) for known in NOT_OURS)
    ]
    assert not warnings, "\n".join(warnings)


def operation_ids(schema: dict) -> set[str]:
    return {
        operation["operationId"]
        for item in schema["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@NEEDS_JAVA
def test_both_clients_have_a_function_for_every_operation(
    served_schema, httpx_generation, urllib3_generation, schema_folder
):
    httpx_modules = {
        path.stem for path in (schema_folder / "museum_schema_httpx" / "api").glob("*/*.py")
    }
    urllib3 = importlib.import_module("museum_schema_urllib3")
    urllib3_methods = {
        name for api in dir(urllib3) if api.endswith("Api") for name in dir(getattr(urllib3, api))
    }
    wanted = {snake(operation_id) for operation_id in operation_ids(served_schema)}

    assert wanted - httpx_modules == set()
    assert wanted - urllib3_methods == set()


class OrderHttpxDriver(HttpxDriver):
    def place_order(self, **fields):
        body = self.models.PlaceOrderRequest.from_dict(fields)
        return self._call("orders", "place_order", body=body)

    def confirm_order(self, order_id: uuid.UUID):
        return self._call("orders", "confirm_order", order_id=order_id)

    def get_order(self, order_id: uuid.UUID):
        return self._call("orders", "get_order", order_id=order_id)

    def order_pdf(self, order_id: uuid.UUID):
        return self._call("orders", "get_order_tickets_pdf", order_id=order_id)

    def cancel_ticket(self, order_id: uuid.UUID, ticket_id: uuid.UUID):
        return self._call("orders", "cancel_order_ticket", order_id=order_id, ticket_id=ticket_id)

    def cancel_order(self, order_id: uuid.UUID):
        return self._call("orders", "cancel_order", order_id=order_id)


class OrderUrllib3Driver(Urllib3Driver):
    def __init__(self, package, url: str, username: str, password: str):
        super().__init__(package, url, username, password)
        self.orders = package.OrdersApi(self.client)

    def place_order(self, **fields):
        body = self.package.PlaceOrderRequest.from_dict(fields)
        return self._call(self.orders.place_order_with_http_info, body)

    def confirm_order(self, order_id: uuid.UUID):
        return self._call(self.orders.confirm_order_with_http_info, order_id)

    def get_order(self, order_id: uuid.UUID):
        return self._call(self.orders.get_order_with_http_info, order_id)

    def order_pdf(self, order_id: uuid.UUID):
        return self._call(self.orders.get_order_tickets_pdf_with_http_info, order_id)

    def cancel_ticket(self, order_id: uuid.UUID, ticket_id: uuid.UUID):
        return self._call(self.orders.cancel_order_ticket_with_http_info, order_id, ticket_id)

    def cancel_order(self, order_id: uuid.UUID):
        return self._call(self.orders.cancel_order_with_http_info, order_id)


@pytest.fixture
def httpx_from_schema(httpx_generation):
    return importlib.import_module("museum_schema_httpx")


@pytest.fixture
def urllib3_from_schema(urllib3_generation):
    return importlib.import_module("museum_schema_urllib3")


DRIVERS = {"httpx_from_schema": OrderHttpxDriver, "urllib3_from_schema": OrderUrllib3Driver}


@pytest.fixture(params=["httpx_from_schema", pytest.param("urllib3_from_schema", marks=NEEDS_JAVA)])
def connect(request, live_server):
    yield from connecting(request, live_server, DRIVERS)


def test_the_order_journey_through_a_client_generated_from_our_schema(connect, transactional_db):
    partner_member(username="visitor")
    day = timezone.localdate() + dt.timedelta(days=3)
    MuseumDayFactory(date=day)
    visitor = connect("visitor")

    held = assert_success(
        visitor.place_order(
            ticketType="general",
            ticketDate=day.isoformat(),
            email="family@example.com",
            lines=[{"category": "adult", "quantity": 1}, {"category": "child", "quantity": 2}],
            hold=True,
        ),
        201,
    )
    assert held["status"] == "held"
    order_id = uuid.UUID(held["orderId"])
    assert len(held["tickets"]) == 3

    confirmed = assert_success(visitor.confirm_order(order_id), 200)
    assert confirmed["status"] == "confirmed"
    assert assert_success(visitor.get_order(order_id), 200) == confirmed

    pdf = visitor.order_pdf(order_id)
    assert pdf.status == 200
    assert pdf.content_type == "application/pdf"
    assert pdf.body.startswith(PDF_SIGNATURE)

    first, *others = confirmed["tickets"]
    one_cancelled = assert_success(
        visitor.cancel_ticket(order_id, uuid.UUID(first["ticketId"])), 200
    )
    cancelled_flags = {t["ticketId"]: t["cancelled"] for t in one_cancelled["tickets"]}
    assert cancelled_flags == {first["ticketId"]: True, **{t["ticketId"]: False for t in others}}

    cancelled = assert_success(visitor.cancel_order(order_id), 200)
    assert cancelled["status"] == "cancelled"
    assert all(ticket["cancelled"] for ticket in cancelled["tickets"])
