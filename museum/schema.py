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
}


class ErrorSerializer(serializers.Serializer):
    """An RFC 9457 problem."""

    type = serializers.CharField(help_text="URN naming the kind of problem.")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField(help_text="What was wrong, for a person.")
    code = serializers.CharField(help_text="Machine-readable problem code.")
    errors = serializers.DictField(
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
