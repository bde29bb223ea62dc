from datetime import date, timedelta

from django.utils import timezone
from rest_framework import serializers

from events.models import (
    DESCRIPTION_MAX_LENGTH,
    LOCATION_MAX_LENGTH,
    MAX_DATES_PER_EVENT,
    NAME_MAX_LENGTH,
)
from hours.serializers import HourMinuteField
from museum.fields import MoneyField, StrictCharField, StrictDateField, StrictIntegerField
from museum.text import multiline_text, one_line_text

MAX_CAPACITY = 1_000_000
DEFAULT_RANGE_DAYS = 7
MAX_RANGE_DAYS = 366


# The views prefetch each event's dates into this attribute, as a plain list: holding them in the
# related manager instead makes Django build a manager and a queryset per event, which was a
# third of the CPU of a page of 30 events.
PREFETCHED_DATES = "prefetched_dates"


class EventDatesField(serializers.ListField):
    """Reads a list of YYYY-MM-DD dates; writes the event's dates in order."""

    child = StrictDateField()

    def __init__(self, **kwargs):
        super().__init__(min_length=1, max_length=MAX_DATES_PER_EVENT, **kwargs)

    def get_attribute(self, instance):
        prefetched = getattr(instance, PREFETCHED_DATES, None)
        return prefetched if prefetched is not None else instance.dates.all()

    def to_representation(self, dates):
        return [event_date.date.isoformat() for event_date in dates]


class CreateSpecialEventRequestSerializer(serializers.Serializer):
    # The model fields' validators: the admin's forms and the API refuse the same text.
    name = StrictCharField(max_length=NAME_MAX_LENGTH, validators=[one_line_text])
    location = StrictCharField(max_length=LOCATION_MAX_LENGTH, validators=[one_line_text])
    eventDescription = StrictCharField(
        source="description", max_length=DESCRIPTION_MAX_LENGTH, validators=[multiline_text]
    )
    dates = EventDatesField(help_text="Dates the event runs on; duplicates are collapsed.")
    price = MoneyField(help_text="Price of a ticket: a non-negative amount with two decimals.")
    capacity = StrictIntegerField(
        min_value=0,
        max_value=MAX_CAPACITY,
        allow_null=True,
        required=False,
        help_text="Places per date (an addition to the contract); absent or null: unlimited.",
    )
    startTime = HourMinuteField(
        source="starts_at",
        required=False,
        allow_null=True,
        help_text=(
            "When it starts on each date, in the museum's time zone (an addition to the "
            "contract); absent or null: when the museum opens."
        ),
    )
    endTime = HourMinuteField(
        source="ends_at",
        required=False,
        allow_null=True,
        help_text=(
            "When it ends on each date, after startTime (an addition to the contract); absent "
            "or null: when the museum closes."
        ),
    )


class UpdateSpecialEventRequestSerializer(CreateSpecialEventRequestSerializer):
    """The same fields, each optional: only the fields sent change."""

    def get_fields(self):
        fields = super().get_fields()
        for field in fields.values():
            field.required = False
        return fields


class SpecialEventResponseSerializer(CreateSpecialEventRequestSerializer):
    eventId = serializers.UUIDField(source="id", read_only=True)

    def get_fields(self):
        fields = super().get_fields()
        return {"eventId": fields.pop("eventId"), **fields}


class EventRangeQuerySerializer(serializers.Serializer):
    startDate = StrictDateField(required=False)
    endDate = StrictDateField(required=False)

    def validate(self, attrs):
        start = attrs.get("startDate") or timezone.localdate()
        # date.max has no "7 days later": the default end stops at the calendar's end.
        default_end = (
            start + timedelta(DEFAULT_RANGE_DAYS)
            if start <= date.max - timedelta(DEFAULT_RANGE_DAYS)
            else date.max
        )
        end = attrs.get("endDate") or default_end
        if end < start:
            raise serializers.ValidationError({"endDate": "Must not be before startDate."})
        if (end - start).days > MAX_RANGE_DAYS:
            raise serializers.ValidationError(
                {"endDate": f"The range may span at most {MAX_RANGE_DAYS} days."}
            )
        return {"start": start, "end": end}
