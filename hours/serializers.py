import re

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from hours.models import MuseumDay
from museum.fields import StrictDateField

# Exactly two digits each side of the colon: strptime's %H:%M alone also takes "9:00" and
# "10:3", and the contract's pattern (colon optional) also "1000". The schema's pattern and the
# server accept the same strings.
HOUR_MINUTE_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"


@extend_schema_field({"type": "string", "pattern": HOUR_MINUTE_PATTERN, "example": "09:00"})
class HourMinuteField(serializers.TimeField):
    """A time of day as the contract writes it: 24-hour HH:MM."""

    def __init__(self, **kwargs):
        super().__init__(format="%H:%M", **kwargs)

    def to_internal_value(self, value):
        if isinstance(value, str) and not re.fullmatch(HOUR_MINUTE_PATTERN, value):
            self.fail("invalid", format="hh:mm")
        return super().to_internal_value(value)


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
