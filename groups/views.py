"""The API's face of groups: the tour programmes a group may book."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics

from groups.models import TourProgramme
from groups.serializers import TourProgrammeSerializer
from museum.query import StrictQueryParameters
from museum.schema import problems


@extend_schema(tags=["Groups"])
class TourProgrammeList(StrictQueryParameters, generics.ListAPIView):
    """A plain list: a museum offers a handful of tours."""

    serializer_class = TourProgrammeSerializer
    pagination_class = None

    def get_queryset(self):
        return TourProgramme.objects.filter(active=True).order_by("name", "pk")

    @extend_schema(
        operation_id="listTourProgrammes",
        summary="The guided tours a group may book",
        description=(
            "The active tour programmes, by name: how long each lasts, the languages it is led "
            "in, the organisations it is for, the most people one guide leads (a group needs "
            "one guide per that many people or part of it) and its fee, per tour or per guide, "
            "charged beside admission."
        ),
        responses={200: TourProgrammeSerializer(many=True), **problems(401)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
