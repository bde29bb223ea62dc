"""Our served schema documents its webhooks, publishNewEvent as the Museum API 1.2 declares it
(under `x-webhooks`, as the schema is OpenAPI 3.0: museum/settings.py says why)."""

from pathlib import Path

import pytest
import yaml
from openapi_spec_validator import validate

CONTRACT_1_2 = Path(__file__).resolve().parents[2] / "contract" / "museum-api-1.2.1.yaml"


@pytest.fixture
def served(client, db) -> dict:
    return client.get("/v1.1/openapi.json").json()


def component(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].split("/")[-1]]
    return node


def test_the_served_schema_is_valid_and_lists_its_webhooks(served):
    validate(served)
    # OpenAPI 3.0 for the generators' sake (museum/settings.py): the webhooks are x-webhooks.
    assert served["openapi"].startswith("3.0")
    assert set(served["x-webhooks"]) == {
        "publishNewEvent",
        "orderEvent",
        "membershipEvent",
        "giftCardEvent",
        "voucherEvent",
        "groupRequestEvent",
        "museumEvent",
    }


def test_publish_new_event_is_the_contracts(served):
    contract = yaml.safe_load(CONTRACT_1_2.read_text())
    theirs = contract["webhooks"]["publishNewEvent"]["post"]
    ours = served["x-webhooks"]["publishNewEvent"]["post"]

    assert ours["operationId"] == theirs["operationId"]
    assert set(ours["responses"]) == set(theirs["responses"]) == {"202"}
    body = component(served, ours["requestBody"]["content"]["application/json"]["schema"])
    wanted = component(contract, theirs["requestBody"]["content"]["application/json"]["schema"])
    assert set(wanted["properties"]) <= set(body["properties"])
    assert set(wanted["required"]) <= set(body.get("required", []))


def test_a_membership_event_carries_the_membership_as_the_api_answers_it(served):
    ours = served["x-webhooks"]["membershipEvent"]["post"]
    body = component(served, ours["requestBody"]["content"]["application/json"]["schema"])
    assert set(component(served, body["properties"]["type"])["enum"]) == {
        "membership.activated",
        "membership.renewed",
        "membership.expired",
        "membership.cancelled",
    }
    data = body["properties"]["data"]
    data = component(served, data["allOf"][0] if "allOf" in data else data)
    assert {"membershipId", "status", "validUntil", "cardUrl"} <= set(data["properties"])


def test_a_gift_card_event_carries_the_move_without_the_cards_code(served):
    ours = served["x-webhooks"]["giftCardEvent"]["post"]
    body = component(served, ours["requestBody"]["content"]["application/json"]["schema"])
    assert set(component(served, body["properties"]["type"])["enum"]) == {
        "giftcard.issued",
        "giftcard.transaction",
    }
    data = body["properties"]["data"]
    data = component(served, data["allOf"][0] if "allOf" in data else data)
    assert {"giftCardId", "codeEnd", "kind", "amount", "balanceAfter", "orderId"} <= set(
        data["properties"]
    )
    assert "code" not in data["properties"]


def test_a_voucher_event_carries_the_voucher_its_order_uses_and_discount(served):
    ours = served["x-webhooks"]["voucherEvent"]["post"]
    body = component(served, ours["requestBody"]["content"]["application/json"]["schema"])
    assert set(component(served, body["properties"]["type"])["enum"]) == {"voucher.redeemed"}
    data = body["properties"]["data"]
    data = component(served, data["allOf"][0] if "allOf" in data else data)
    assert {"voucherId", "code", "tag", "orderId", "uses", "discount"} <= set(data["properties"])
