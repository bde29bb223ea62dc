from django.db.models import Min, Prefetch
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import ParseError
from rest_framework.response import Response

from events import services
from events.models import SpecialEvent
from events.serializers import (
    PREFETCHED_DATES,
    CreateSpecialEventRequestSerializer,
    EventRangeQuerySerializer,
    SpecialEventResponseSerializer,
    UpdateSpecialEventRequestSerializer,
)
from museum.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from museum.permissions import StaffManagesOrReadOnly
from museum.query import StrictQueryParameters, validated_query
from museum.response_cache import CachedList, CachedRetrieve
from museum.schema import problems
from orders.services.cancellation import cancel_event

EVENT_ID = OpenApiParameter(
    "eventId",
    OpenApiTypes.UUID,
    OpenApiParameter.PATH,
    description="Identifier for a special event.",
)


@extend_schema_view(
    list=extend_schema(
        operation_id="listSpecialEvents",
        summary="List special events",
        description=(
            "Events with at least one date in [startDate, endDate], ordered by their first date "
            "in that range, then name, then id."
        ),
        parameters=[
            OpenApiParameter(
                "startDate", OpenApiTypes.DATE, description="Defaults to the museum's today."
            ),
            OpenApiParameter(
                "endDate", OpenApiTypes.DATE, description="Defaults to 7 days after startDate."
            ),
        ],
        responses={200: SpecialEventResponseSerializer(many=True), **problems(400, 401)},
    ),
    create=extend_schema(
        operation_id="createSpecialEvent",
        summary="Create special events",
        request=CreateSpecialEventRequestSerializer,
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        responses={201: SpecialEventResponseSerializer, **problems(400, 401, 403, 409, 415, 422)},
    ),
    retrieve=extend_schema(
        operation_id="getSpecialEvent",
        summary="Get special event",
        parameters=[EVENT_ID],
        responses={200: SpecialEventResponseSerializer, **problems(401, 404)},
    ),
    partial_update=extend_schema(
        operation_id="updateSpecialEvent",
        summary="Update special event",
        parameters=[EVENT_ID],
        request=UpdateSpecialEventRequestSerializer,
        responses={200: SpecialEventResponseSerializer, **problems(400, 401, 403, 404, 415)},
    ),
    destroy=extend_schema(
        operation_id="deleteSpecialEvent",
        summary="Delete special event",
        description="Cancels the event: it disappears from every read; sold tickets are kept.",
        parameters=[EVENT_ID],
        responses={204: None, **problems(401, 403, 404)},
    ),
)
@extend_schema(tags=["Events"])
class SpecialEventViewSet(
    CachedList,
    CachedRetrieve,
    StrictQueryParameters,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    cache_group = "events"
    queryset = SpecialEvent.objects.active().prefetch_related(
        Prefetch("dates", to_attr=PREFETCHED_DATES)
    )
    serializer_class = SpecialEventResponseSerializer
    permission_classes = [StaffManagesOrReadOnly]
    list_query_serializer = EventRangeQuerySerializer
    lookup_url_kwarg = "eventId"
    lookup_value_converter = "uuid"
    # The contract has no PUT: a full replace would be a second way to do PATCH's job.
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def filter_queryset(self, queryset):
        if self.action != "list":
            return queryset
        query = validated_query(self.list_query_serializer, self.request)
        start, end = query["start"], query["end"]
        # Filtering on the dates before annotating makes Min() see only the dates in range.
        return (
            queryset.filter(dates__date__range=(start, end))
            .annotate(first_date_in_range=Min("dates__date"))
            .order_by("first_date_in_range", "name", "id")
        )

    @idempotent
    def create(self, request, *args, **kwargs):
        data = self._validated(CreateSpecialEventRequestSerializer)
        event = services.create_event(**data)
        location = reverse("special-events-detail", kwargs={self.lookup_url_kwarg: event.pk})
        return Response(
            SpecialEventResponseSerializer(event).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    def partial_update(self, request, *args, **kwargs):
        if request.stream is None:  # no body at all; `{}` is a valid PATCH that changes nothing
            raise ParseError(_("Send the fields to change as a JSON object."))
        data = self._validated(UpdateSpecialEventRequestSerializer)
        # The service loads the event under its row lock: no read before it.
        event = services.update_event(event_id=self.kwargs[self.lookup_url_kwarg], **data)
        return Response(SpecialEventResponseSerializer(event).data)

    def destroy(self, request, *args, **kwargs):
        cancel_event(event_id=self.kwargs[self.lookup_url_kwarg])
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _validated(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data
