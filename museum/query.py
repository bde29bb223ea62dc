"""Query parameters: validated strictly, and only the ones an operation takes."""

import functools

from django.utils.translation import gettext as _
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.views import APIView

from museum.fields import QueryIntegerField

DEFAULT_LIMIT = 10
MAX_LIMIT = 30


class PageQuerySerializer(serializers.Serializer):
    page = QueryIntegerField(min_value=1, default=1)
    limit = QueryIntegerField(min_value=1, max_value=MAX_LIMIT, default=DEFAULT_LIMIT)


def validated_query(serializer_class: type[serializers.Serializer], request) -> dict:
    """The request's query parameters, validated by `serializer_class` (400 when invalid)."""
    # A plain dict, not the QueryDict: DRF reads an empty `?startDate=` from a QueryDict as if it
    # were absent, but an empty string is not a date, and a client that sends one has a bug.
    serializer = serializer_class(data=request.query_params.dict())
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class StrictQueryParameters(APIView):
    """View mixin: a query parameter the operation does not take is a 400 (Stripe does the same).

    So a typo such as `?start_date=` is not silently read as "no filter". Lists take their
    `list_query_serializer`'s fields and the paging parameters; other operations take none.
    """

    list_query_serializer: type[serializers.Serializer] | None = None

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if unknown := sorted(set(request.query_params) - self.accepted_query_parameters()):
            raise ValidationError(
                {name: [_("Not a parameter of this operation.")] for name in unknown}
            )

    def accepted_query_parameters(self) -> frozenset[str]:
        if getattr(self, "action", None) == "list":
            return parameter_names(self.list_query_serializer) | parameter_names(
                PageQuerySerializer
            )
        return frozenset()


@functools.cache
def parameter_names(serializer_class: type[serializers.Serializer]) -> frozenset[str]:
    # Once per class: each instance builds and deep-copies its fields.
    return frozenset(serializer_class().fields)
