"""OpenAPI pieces every app's views share: the problem+json error responses."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from museum.errors import PROBLEM_CONTENT_TYPE

DESCRIPTIONS = {
    400: "Bad request: the body or a parameter is invalid.",
    401: "Unauthorized: missing or wrong Basic credentials.",
    403: "Forbidden: the account may not do this.",
    404: "Not found.",
    409: "Conflict with the museum's rules.",
    415: "Unsupported media type: send application/json.",
    422: "Unprocessable: the Idempotency-Key was used for another request.",
    429: "Too many requests: wait for Retry-After seconds.",
}


class ErrorSerializer(serializers.Serializer):
    """An RFC 9457 problem."""

    type = serializers.CharField(help_text="URN naming the kind of problem.")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField(help_text="What was wrong, for a person.")
    code = serializers.CharField(help_text="Machine-readable problem code.")
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
    name = "MuseumPlaceholderAuth"  # the contract's name for its Basic scheme

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
