"""The public contract's operations and media types, read from the repository's copy."""

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

CONTRACT = Path(__file__).resolve().parents[1] / "contract" / "museum-api-1.1.1.yaml"
METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    path: str
    success_status: int
    success_type: str | None  # None: the success answer has no body (204)
    media_types: tuple[str, ...]  # of every response, success and errors


@cache
def load() -> dict:
    return yaml.safe_load(CONTRACT.read_text())


def _response(contract: dict, response: dict) -> dict:
    if "$ref" in response:
        return contract["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
    return response


def operations() -> dict[str, Operation]:
    contract = load()
    found = {}
    for path, item in contract["paths"].items():
        for method in METHODS:
            if method not in item:
                continue
            operation = item[method]
            responses = {
                int(code): _response(contract, response)
                for code, response in operation["responses"].items()
            }
            success = min(code for code in responses if 200 <= code < 300)
            found[operation["operationId"]] = Operation(
                operation_id=operation["operationId"],
                method=method,
                path=path,
                success_status=success,
                success_type=next(iter(responses[success].get("content", {})), None),
                media_types=tuple(
                    dict.fromkeys(
                        media_type
                        for response in responses.values()
                        for media_type in response.get("content", {})
                    )
                ),
            )
    return found


def media_types() -> list[str]:
    """Every media type any response of the contract has."""
    return sorted({t for operation in operations().values() for t in operation.media_types})
