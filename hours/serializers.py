from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from hours.models import MuseumDay
from museum.fields import StrictDateField


@extend_schema_field(
    {"type": "string", "pattern": r"^([01]\d|2[0-3]):?([0-5]\d)$", "example": "09:00"}
)
class HourMinuteField(serializers.TimeField):
    """A time of day as the contract writes it: 24-hour HH:MM."""

    def __init__(self, **kwargs):
        super().__init__(format="%H:%M", **kwargs)


class MuseumDailyHoursSerializer(serializers.ModelSerializer):
    timeOpen = HourMinuteField(source="opens_at")
    timeClose = HourMinuteField(source="closes_at")

    class Meta:
        model = MuseumDay
        fields = ["date", "timeOpen", "timeClose"]


class HoursQuerySerializer(serializers.Serializer):
    startDate = StrictDateField(required=False)


class EntrySlotSerializer(serializers.Serializer):
    entryTime = HourMinuteField(source="entry_time")
    capacity = serializers.IntegerField(allow_null=True, help_text="Null: unlimited.")
    available = serializers.IntegerField(
        allow_null=True,
        help_text="Places left, never more than the day has left; null: unlimited; 0 once over.",
    )
    over = serializers.BooleanField(
        help_text="Its sale ended: the next slot has begun, or for the last slot the museum closed."
    )
