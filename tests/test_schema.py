"""The generated schema carries the public contract's paths, methods and operationIds."""

from pathlib import Path

import pytest
import yaml

CONTRACT = Path(__file__).resolve().parents[2] / "shared" / "contract" / "museum-api-1.1.1.yaml"
METHODS = {"get", "put", "post", "patch", "delete", "head", "options"}


def operations(schema: dict) -> set[tuple[str, str, str]]:
    return {
        (path, method, operation.get("operationId"))
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


@pytest.fixture(scope="module")
def contract() -> dict:
    return yaml.safe_load(CONTRACT.read_text())


@pytest.fixture
def generated(client, db) -> dict:
    response = client.get("/v1.1/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_every_contract_operation_is_in_the_generated_schema(contract, generated):
    missing = operations(contract) - operations(generated)

    assert not missing, f"missing from /v1.1/openapi.json: {sorted(missing)}"


def test_the_schema_uses_the_contracts_security_scheme(contract, generated):
    assert generated["components"]["securitySchemes"] == contract["components"]["securitySchemes"]
    for _path, _method, operation_id in operations(generated):
        assert operation_id


def test_the_schema_is_served_as_yaml_and_the_docs_page_loads_offline(client, db):
    assert client.get("/v1.1/openapi.yaml").status_code == 200
    docs = client.get("/v1.1/docs/")
    assert docs.status_code == 200
    assert b"cdn" not in docs.content.lower()
