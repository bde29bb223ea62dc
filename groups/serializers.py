"""What the API shows of groups: the tour programmes a group may book."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from groups.models import FeePer, OrganisationKind
from museum.fields import MoneyField
from orders.serializers import CurrencyField


class TourProgrammeSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="As a group request's `tourId` names it.")
    name = serializers.CharField()
    description = serializers.CharField()
    durationMinutes = serializers.IntegerField(source="duration_minutes")
    languages = serializers.SerializerMethodField(help_text="The languages it is led in.")
    audiences = serializers.SerializerMethodField(help_text="The organisations it is for.")
    maxPeoplePerGuide = serializers.IntegerField(
        source="max_people_per_guide",
        help_text="A group needs one guide per this many people or part of it.",
    )
    fee = MoneyField(help_text="Per tour or per guide (`feePer`), beside admission.")
    feePer = serializers.ChoiceField(source="fee_per", choices=FeePer.values)
    currency = CurrencyField()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_languages(self, tour) -> list[str]:
        return list(tour.languages)

    @extend_schema_field(
        serializers.ListField(child=serializers.ChoiceField(choices=OrganisationKind.values))
    )
    def get_audiences(self, tour) -> list[str]:
        return list(tour.audiences)
