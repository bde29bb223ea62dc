from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets

from hours.models import MuseumDay
from hours.serializers import HoursQuerySerializer, MuseumDailyHoursSerializer
from museum.query import StrictQueryParameters, validated_query
from museum.schema import problems
from museum.shared_reads import SharedList


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
    SharedList, StrictQueryParameters, mixins.ListModelMixin, viewsets.GenericViewSet
):
    shared_reads_section = "hours"
    queryset = MuseumDay.objects.filter(is_closed=False).order_by("date")
    serializer_class = MuseumDailyHoursSerializer
    list_query_serializer = HoursQuerySerializer

    def filter_queryset(self, queryset):
        query = validated_query(self.list_query_serializer, self.request)
        start = query.get("startDate") or timezone.localdate()
        return queryset.filter(date__gte=start)
