"""Serializer fields that accept exactly what the contract's JSON types say, nothing looser.

DRF is lenient by default (a number where a string belongs, "25" where a number belongs,
`2024-1-1` as a date); a client generated from the contract never sends those, so they are
bad input and get a 400 rather than a guess.

Ours: DRF has no strict mode and no library adds one; each field is a small DRF subclass.
"""

import re
from datetime import date
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
QUERY_INTEGER = re.compile(r"-?[0-9]+")


class StrictDateField(serializers.DateField):
    """A calendar date written exactly as YYYY-MM-DD (RFC 3339 full-date)."""

    default_error_messages = {"invalid": _("Enter a real date as YYYY-MM-DD.")}

    def to_internal_value(self, value):
        if not isinstance(value, str) or not ISO_DATE.fullmatch(value):
            self.fail("invalid")
        try:
            return date.fromisoformat(value)
        except ValueError:
            self.fail("invalid")


class StrictCharField(serializers.CharField):
    """Text that arrived as a JSON string and can be stored as UTF-8."""

    default_error_messages = {
        "not_a_string": _("Must be a string."),
        "surrogate": _("Contains an unpaired surrogate, which is not valid text."),
    }

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string")
        if LONE_SURROGATE.search(data):
            self.fail("surrogate")
        return super().to_internal_value(data)


# What a database column or key holds (a 64-bit integer): beyond it a number names no row, and
# SQLite cannot even compare a column with it (OverflowError).
LARGEST_INTEGER = 2**63 - 1


class StrictIntegerField(serializers.IntegerField):
    """A whole number that arrived as a JSON integer, within what a database column holds."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        if data > LARGEST_INTEGER:
            self.fail("max_value", max_value=LARGEST_INTEGER)
        if data < -LARGEST_INTEGER - 1:
            self.fail("min_value", min_value=-LARGEST_INTEGER - 1)
        return super().to_internal_value(data)


class QueryIntegerField(serializers.IntegerField):
    """A whole number in a query string: ASCII digits, an optional minus, nothing else.

    DRF would also read " 7", "7.0", "+7" and the fullwidth "７" as 7.
    """

    def to_internal_value(self, data):
        if not isinstance(data, str) or not QUERY_INTEGER.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictUUIDField(serializers.UUIDField):
    """A UUID that arrived as a string (DRF would also take a JSON integer)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class MoneyField(serializers.DecimalField):
    """An amount with at most two decimals, kept exactly and sent back as a JSON number."""

    default_error_messages = {"not_a_number": _("Must be a number.")}

    def __init__(self, **kwargs):
        kwargs.setdefault("max_digits", 8)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("min_value", Decimal("0"))
        super().__init__(coerce_to_string=False, **kwargs)

    def to_internal_value(self, data):
        # bool is an int in Python, but `true` is not a price.
        if isinstance(data, bool) or not isinstance(data, int | float | Decimal):
            self.fail("not_a_number")
        if isinstance(data, Decimal) and data.is_finite():
            # The JSON parser keeps 19.990 as written; its value has two decimals. A context as
            # precise as the number itself, so nothing is rounded and no exponent overflows.
            exact = Context(prec=max(len(data.as_tuple().digits), 1), Emax=MAX_EMAX, Emin=MIN_EMIN)
            data = data.normalize(exact)
        return super().to_internal_value(data)

    def to_representation(self, value):
        value = Decimal(value)
        return int(value) if value == value.to_integral_value() else float(value)


class StrictBooleanField(serializers.BooleanField):
    """true or false as JSON writes them (DRF would also take "yes", "1", 0...)."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data
