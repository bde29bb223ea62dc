import functools
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, mixins, viewsets
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from hours.models import EntrySlot, MuseumDay
from hours.serializers import EntrySlotSerializer, HoursQuerySerializer, MuseumDailyHoursSerializer
from hours.services import slots_on_sale
from museum.fields import StrictDateField
from museum.query import StrictQueryParameters, validated_query
from museum.response_cache import Cached, CachedList, cached_response
from museum.schema import problems


@extend_schema_view(
    list=extend_schema(
        operation_id="getMuseumHours",
        summary="Get museum hours",
        description="Upcoming opening hours, one record per open day, ordered by date.",
        tags=["Operations"],
        parameters=[
            OpenApiParameter(
                "startDate",
                type=OpenApiTypes.DATE,
                description="First day to list (YYYY-MM-DD). Defaults to the museum's today.",
            )
        ],
        responses={200: MuseumDailyHoursSerializer(many=True), **problems(400, 401)},
    )
)
class MuseumHoursViewSet(
    CachedList, StrictQueryParameters, mixins.ListModelMixin, viewsets.GenericViewSet
):
    cache_group = "hours"
    queryset = MuseumDay.objects.filter(is_closed=False).order_by("date")
    serializer_class = MuseumDailyHoursSerializer
    list_query_serializer = HoursQuerySerializer

    def filter_queryset(self, queryset):
        query = validated_query(self.list_query_serializer, self.request)
        start = query.get("startDate") or timezone.localdate()
        return queryset.filter(date__gte=start)


class EntrySlotList(Cached, StrictQueryParameters, generics.ListAPIView):
    """The entry slots of one open day, with the places left: every buyer asks, so shared."""

    serializer_class = EntrySlotSerializer
    pagination_class = None
    queryset = EntrySlot.objects.none()  # what the schema reads; `list` asks hours.services

    def list(self, request, *args, **kwargs):
        date = StrictDateField().run_validation(self.kwargs["date"])
        day = MuseumDay.objects.filter(date=date, is_closed=False).first()
        if day is None:
            raise NotFound(_("The museum is not open on that day."))
        return Response(self.get_serializer(slots_on_sale(day=day), many=True).data)

    @extend_schema(
        operation_id="listEntrySlots",
        summary="Timed-entry slots of a day",
        description=(
            "Each slot's entry time, capacity and places left (null: unlimited; never more than "
            "the day has left). Today, a slot whose next slot has begun (the last: whose day has "
            "closed) is `over`, with none available. An empty list: the day has no timed entry. "
            "A day the museum is closed is a 404."
        ),
        tags=["Operations"],
        parameters=[OpenApiParameter("date", OpenApiTypes.DATE, OpenApiParameter.PATH)],
        responses={200: EntrySlotSerializer(many=True), **problems(400, 401, 404)},
    )
    def get(self, request, *args, **kwargs):
        build = functools.partial(super().get, request, *args, **kwargs)
        group, moment = self.cached_as(request)
        return cached_response(group, request, build, moment=moment)

    def cached_as(self, request) -> tuple[str, str]:
        # Today's slots end their sale as the clock moves, not only with a write, and the kept
        # member places of the days ahead go on sale at their cut-off: these are kept a minute.
        moment = f"{timezone.localtime():%H:%M}" if _moves_with_clock(self.kwargs["date"]) else ""
        return "slots", moment


def _moves_with_clock(day: str) -> bool:
    """Whether the slots of `day` (as the path names it) may change as time passes: today's,
    and those whose kept member places may reach their cut-off (within the release hours)."""
    today = timezone.localdate()
    ahead = settings.MUSEUM_MEMBER_PLACES_RELEASE_HOURS // 24 + 1
    return today.isoformat() <= day <= (today + timedelta(days=ahead)).isoformat()
