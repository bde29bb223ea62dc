"""OpenAPI pieces every app's views share: the problem+json error responses."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from museum.errors import PROBLEM_CONTENT_TYPE

DESCRIPTIONS = {
    400: "Bad request: the body or a parameter is invalid.",
    401: "Unauthorized: missing or wrong Basic credentials.",
    403: "Forbidden: the account may not do this.",
    404: "Not found.",
    402: "Payment required: the order is confirmed by its payment.",
    409: "Conflict with the museum's rules.",
    413: "The body is larger than MUSEUM_MAX_BODY_BYTES (`limit`).",
    415: "Unsupported media type: send application/json.",
    422: "Unprocessable: the Idempotency-Key was used for another request.",
    429: "Too many requests, or more than a limit allows (the problem's `limit`).",
    502: "Bad gateway: the payment provider failed; nothing was charged.",
    503: "Unavailable: the database or the cache is unreachable; retry after Retry-After seconds.",
}


class ErrorSerializer(serializers.Serializer):
    """An RFC 9457 problem."""

    type = serializers.CharField(help_text="URN naming the kind of problem.")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField(help_text="What was wrong, for a person.")
    code = serializers.CharField(help_text="Machine-readable problem code.")
    reason = serializers.CharField(
        required=False,
        help_text="For a broken museum rule (a 409, or a 403/404 the museum's rules decide): the "
        "same value as `code`, under the name clients branching on the rule read.",
    )
    requestId = serializers.CharField(
        required=False,
        help_text="The request's id, as in its X-Request-ID header: quote it to find its log.",
    )
    # What the service adds for the problems that need it (museum/exceptions.py's `extra`).
    available = serializers.IntegerField(
        required=False, help_text="`sold_out`: the places left (0 or more)."
    )
    scope = serializers.CharField(
        required=False, help_text="`sold_out`: what ran out (the day, the slot or the event)."
    )
    deadline = serializers.DateTimeField(
        required=False, help_text="`too_late`: when cancelling stopped being possible."
    )
    entryTime = serializers.CharField(
        required=False, help_text="`too_early`: the ticket's entry slot, HH:MM."
    )
    firstEntryAt = serializers.DateTimeField(
        required=False, help_text="`already_checked_in`: when the ticket was first admitted."
    )
    orderCode = serializers.CharField(
        required=False, help_text="An order's check-in none of whose tickets was admitted."
    )
    refused = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="An order's check-in none of whose tickets was admitted: each ticket's "
        "refusal, as in checkInTicket's answer.",
    )
    limit = serializers.IntegerField(
        required=False, help_text="`payload_too_large`: the largest body taken, in bytes."
    )
    requestStatus = serializers.CharField(
        required=False,
        help_text="`group_request_answered`: the group request's status, which refused the step.",
    )
    # Named like Serializer.errors, which it hides: this serializer only describes the schema.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="For validation problems: messages per field.",
    )


def problems(*statuses: int) -> dict:
    """Responses entries for extend_schema: each status answered with a problem."""
    return {
        (status, PROBLEM_CONTENT_TYPE): OpenApiResponse(ErrorSerializer, DESCRIPTIONS[status])
        for status in statuses
    }


class MuseumBasicAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "museum.authentication.MuseumBasicAuthentication"
    # Named for what it is; the contract's copy calls the same scheme MuseumPlaceholderAuth.
    name = "basicAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "basic"}


class MuseumAutoSchema(AutoSchema):
    def get_paginated_name(self, serializer_name):
        # The contract names a list's schema after its operation: listSpecialEvents answers a
        # ListSpecialEventsResponse. Our list bodies stay plain arrays (see PagePagination).
        operation_id = self.get_operation_id()
        return f"{operation_id[0].upper()}{operation_id[1:]}Response"


# Where the public contract gives a property's schema a component of its own, ours does too, so
# that clients generated from either file share type names (EventId, Date, Email, ...).
CONTRACT_PROPERTY_COMPONENTS = {
    "eventId": "EventId",
    "name": "EventName",
    "eventName": "EventName",
    "location": "EventLocation",
    "eventDescription": "EventDescription",
    "dates": "EventDates",
    "price": "EventPrice",
    "ticketId": "TicketId",
    "ticketDate": "Date",
    "date": "Date",
    "email": "Email",
    "phone": "Phone",
    "message": "TicketMessage",
    "confirmationCode": "TicketConfirmation",
}
CONTRACT_RESPONSE_COMPONENTS = {"getTicketCode": "GetTicketCodeResponse"}


def _as_component(schemas: dict, name: str, schema: dict) -> dict:
    """A $ref to component `name` holding `schema`; `schema` itself where the name is taken."""
    # readOnly and description belong to where a type is used, not to the type.
    bare = {key: value for key, value in schema.items() if key not in {"readOnly", "description"}}
    if schemas.setdefault(name, bare) != bare:
        return schema  # e.g. a nullable eventName: not the contract's EventName
    return {"$ref": f"#/components/schemas/{name}"}


def use_contract_component_names(result, generator, request, public):
    """drf-spectacular postprocessing hook: the contract's component names for its types."""
    schemas = result["components"]["schemas"]
    for component in list(schemas.values()):
        properties = component.get("properties", {})
        for prop, schema in properties.items():
            if (name := CONTRACT_PROPERTY_COMPONENTS.get(prop)) and "$ref" not in schema:
                properties[prop] = _as_component(schemas, name, schema)
    for path in result["paths"].values():
        for operation in path.values():
            if name := CONTRACT_RESPONSE_COMPONENTS.get(operation.get("operationId")):
                for content in operation["responses"]["200"]["content"].values():
                    content["schema"] = _as_component(schemas, name, content["schema"])
    return result


QUEUE_TOKEN_PARAMETER = OpenApiParameter(
    "Queue-Token",
    {"type": "string", "maxLength": 500},
    OpenApiParameter.HEADER,
    description=(
        "While a drop's waiting room stands in front of these places: the admission its line "
        "gave you (`GET /v1.1/drops/{dropId}/queue`), which buys once. Without it 403 "
        "`queue_token_required`; spent 403 `queue_token_used`; run out 403 `queue_token_expired`."
    ),
)


def _header(description: str, schema: dict | None = None) -> dict:
    return {"description": description, "schema": schema or {"type": "integer", "minimum": 0}}


RETRY_AFTER = _header("Seconds to wait before trying again.")
RATE_LIMIT_HEADERS = {
    "RateLimit-Limit": _header("Requests allowed in the current window (the nearest limit)."),
    "RateLimit-Remaining": _header("Requests left in the current window."),
    "RateLimit-Reset": _header("Seconds until the current window ends."),
}
PAGE_HEADERS = {
    "X-Total-Count": _header("How many items all pages hold together."),
    "Link": _header(
        "RFC 8288 links to the first, previous, next and last pages (those that exist).",
        {"type": "string"},
    ),
}
# The problems any operation can answer, whatever its own: every request is throttled and reads
# the database or the cache (museum/throttling.py, museum/errors.py).
ANY_OPERATION_PROBLEMS = (429, 503)


def _problem_response(schemas_ref: str, status: int) -> dict:
    return {
        "content": {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": schemas_ref}}},
        "description": DESCRIPTIONS[status],
    }


IDEMPOTENT_REPLAYED = _header(
    "`true` when this answer is the stored one of an earlier request with the same "
    "Idempotency-Key; absent otherwise.",
    {"type": "string", "enum": ["true"]},
)
ETAG = _header(
    "The image's (or PDF's) version: send it as If-None-Match to revalidate.", {"type": "string"}
)
IN_PROGRESS_RETRY_AFTER = _header(
    "For a request whose Idempotency-Key is still being worked on: seconds to wait before retrying."
)


CONTENT_LANGUAGE = _header(
    "The language of the answer's texts (names, problem titles and details): the one "
    "Accept-Language asked for among the museum's, else the museum's own.",
    {"type": "string"},
)
ACCEPT_LANGUAGE = {
    "name": "Accept-Language",
    "in": "header",
    "required": False,
    "description": "The languages the client reads, as HTTP says (e.g. `de, en;q=0.5`): the answer "
    "uses the first the museum offers (by default en, de, fr, nl, es), else the museum's own.",
    "schema": {"type": "string"},
}


LOCATION = {
    "description": "Where the created resource is read (a ticket's: the order that holds it).",
    "schema": {"type": "string", "format": "uri-reference"},
}


# The operations whose answer carries an ETag (and answers 304 to If-None-Match).
ETAGGED = {"getTicketCode", "getOrderTicketsPdf", "getMembershipCardPng", "getMembershipCardPdf"}


def _success_headers(operation: dict, parameters: set[tuple[str, str]]) -> dict:
    headers = dict(RATE_LIMIT_HEADERS)
    if ("query", "page") in parameters:
        headers.update(PAGE_HEADERS)
    if ("header", "Idempotency-Key") in parameters:
        headers["Idempotent-Replayed"] = IDEMPOTENT_REPLAYED
    if operation.get("operationId") in ETAGGED:
        headers["ETag"] = ETAG
    return headers


def document_headers_and_common_problems(result, generator, request, public):
    """drf-spectacular postprocessing hook: 429 and 503 on every operation, Accept-Language on
    each, and the headers the service sends (RateLimit-*, Retry-After, X-Total-Count and Link on
    pages, ETag, Idempotent-Replayed, Location on a 201, Content-Language), so generated clients
    can read them."""
    problem = "#/components/schemas/Error"
    for path in result["paths"].values():
        for operation in path.values():
            responses = operation["responses"]
            parameters = {(p.get("in"), p.get("name")) for p in operation.get("parameters", [])}
            operation.setdefault("parameters", []).append(ACCEPT_LANGUAGE)
            for status in ANY_OPERATION_PROBLEMS:
                responses.setdefault(str(status), _problem_response(problem, status))
            for status, response in responses.items():
                if status.startswith("2"):
                    response.setdefault("headers", {}).update(
                        _success_headers(operation, parameters)
                    )
                if status == "201":
                    response["headers"]["Location"] = LOCATION
            responses["429"].setdefault("headers", {}).update(
                {**RATE_LIMIT_HEADERS, "Retry-After": RETRY_AFTER}
            )
            responses["503"].setdefault("headers", {})["Retry-After"] = RETRY_AFTER
            for response in responses.values():
                response.setdefault("headers", {})["Content-Language"] = CONTENT_LANGUAGE
            if ("header", "Idempotency-Key") in parameters and "409" in responses:
                responses["409"].setdefault("headers", {})["Retry-After"] = IN_PROGRESS_RETRY_AFTER
    return result


def webhooks_as_extension(result, generator, request, public):
    """An OpenAPI 3.0 schema has no `webhooks:`: the same object goes under `x-webhooks`."""
    if "webhooks" in result and not result["openapi"].startswith("3.1"):
        result["x-webhooks"] = result.pop("webhooks")
    return result
