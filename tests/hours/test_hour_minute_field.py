"""entryTime, timeOpen and timeClose: the schema's pattern accepts exactly what the server does."""

import datetime as dt

import jsonschema_rs
import pytest
from rest_framework import serializers

from hours.serializers import HOUR_MINUTE_PATTERN, HourMinuteField

ACCEPTED = ["00:00", "09:00", "10:30", "19:59", "23:59"]
# Each of these once passed either the server (strptime's %H:%M) or the schema's pattern.
# As a JSON Schema validator reads the pattern (ECMA-262: `$` is the end, never before a final
# newline as in Python's re); jsonschema-rs is schemathesis' validator.
SCHEMA = jsonschema_rs.validator_for({"type": "string", "pattern": HOUR_MINUTE_PATTERN})
REFUSED = [
    "9:00",
    "10:3",
    "1000",
    "24:00",
    "10:60",
    "10:00:00",
    " 10:00",
    "10:00\n",
    "",
    "１０:００",
]


@pytest.mark.parametrize("value", ACCEPTED)
def test_hh_mm_is_taken_by_the_field_and_the_pattern(value):
    assert HourMinuteField().run_validation(value) == dt.time.fromisoformat(value)
    assert SCHEMA.is_valid(value)


@pytest.mark.parametrize("value", REFUSED)
def test_anything_else_is_refused_by_both(value):
    with pytest.raises(serializers.ValidationError):
        HourMinuteField().run_validation(value)
    assert not SCHEMA.is_valid(value)
