"""Vouchers as a CSV file, written and read in one shape: a header of the API's field names, then
a voucher a row; lists (categories, events, channels) separated by spaces, dates and times as
ISO 8601, money with two decimals. A file exported imports again (into another museum, or after
the codes were deleted): what they gave (`uses`, `discountGiven`) is read by no one."""

import csv
import io
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import gettext as _

from events.models import SpecialEvent
from museum.admin_pages import report_cell
from museum.exceptions import InvalidInput
from orders.models import VisitorCategory, Voucher, VoucherChannel, VoucherEffect

# The file's columns and the model's fields they are.
COLUMNS = {
    "code": "code",
    "effect": "effect",
    "value": "value",
    "stacks": "stacks",
    "ticketType": "ticket_type",
    "categories": "categories",
    "events": "events",
    "visitFrom": "visit_from",
    "visitUntil": "visit_until",
    "entryFrom": "entry_from",
    "entryUntil": "entry_until",
    "channels": "channels",
    "validFrom": "valid_from",
    "validUntil": "valid_until",
    "maxUses": "max_uses",
    "budget": "budget",
    "tag": "tag",
    "comment": "comment",
}
# What its valid tickets took (vouchers.services.vouchers annotates them): written, never read.
COUNTERS = {"uses": "used", "discountGiven": "discounted"}
HEADER = [*COLUMNS, *COUNTERS]
# An import stops reading past this many rows: a batch's most.
MAX_ROWS = 1000


def rows_of(vouchers: Iterable[Voucher]) -> Iterable[list]:
    """The file's rows of `vouchers` (vouchers.services.vouchers: their categories and events
    prefetched, what they gave annotated)."""
    for voucher in vouchers:
        yield [_cell(voucher, field) for field in (*COLUMNS.values(), *COUNTERS.values())]


def _cell(voucher: Voucher, field: str):
    if field == "categories":
        return " ".join(sorted(category.category for category in voucher.categories.all()))
    if field == "events":
        return " ".join(sorted(str(event.pk) for event in voucher.events.all()))
    if field == "channels":
        return " ".join(voucher.channels)
    if field == "stacks":
        return "true" if voucher.stacks else "false"
    value = getattr(voucher, field)
    if value is None:
        return ""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return report_cell(value)


class VoucherRowForm(forms.Form):
    """One row read: the file's text into the model's values."""

    code = forms.CharField(max_length=40)
    effect = forms.ChoiceField(choices=VoucherEffect.choices)
    value = forms.DecimalField(
        max_digits=8, decimal_places=2, min_value=Decimal("0"), required=False
    )
    stacks = forms.TypedChoiceField(
        choices=[("true", "true"), ("false", "false")],
        coerce=lambda text: text == "true",
        required=False,
        empty_value=False,  # type: ignore[arg-type]  # a bool: what coerce makes of the others
    )
    ticket_type = forms.ChoiceField(
        choices=[("", ""), ("general", "general"), ("event", "event")], required=False
    )
    categories: forms.ModelMultipleChoiceField = forms.ModelMultipleChoiceField(
        VisitorCategory.objects.all(), to_field_name="category", required=False
    )
    events: forms.ModelMultipleChoiceField = forms.ModelMultipleChoiceField(
        SpecialEvent.objects.all(), required=False
    )
    visit_from = forms.DateField(required=False)
    visit_until = forms.DateField(required=False)
    entry_from = forms.TimeField(required=False)
    entry_until = forms.TimeField(required=False)
    channels = forms.MultipleChoiceField(choices=VoucherChannel.choices, required=False)
    valid_from = forms.DateTimeField(required=False)
    valid_until = forms.DateTimeField(required=False)
    max_uses = forms.IntegerField(min_value=0, required=False)
    budget = forms.DecimalField(
        max_digits=10, decimal_places=2, min_value=Decimal("0"), required=False
    )
    tag = forms.CharField(max_length=60, required=False)
    comment = forms.CharField(required=False)


LISTS = ("categories", "events", "channels")


def read(text: str) -> list[dict[str, Any]]:
    """The vouchers of a CSV file, each the fields of a voucher with its code and its `row` (its
    line, the header being line 1); InvalidInput naming the row and the column of the first
    error."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = reader.fieldnames or []
    unknown = [name for name in header if name not in COLUMNS and name not in COUNTERS]
    if unknown:
        raise InvalidInput("file", _("Unknown columns: %(names)s.") % {"names": ", ".join(unknown)})
    if "code" not in header or "effect" not in header:
        raise InvalidInput("file", _("The file needs the columns code and effect."))
    rows: list[dict] = []
    for row in reader:
        if len(rows) == MAX_ROWS:
            raise InvalidInput("file", _("At most %(n)s vouchers a file.") % {"n": MAX_ROWS})
        rows.append(_read_row(row, reader.line_num))
    if not rows:
        raise InvalidInput("file", _("The file has no vouchers."))
    return rows


def _read_row(row: dict, line: int) -> dict[str, Any]:
    if None in row:
        raise InvalidInput(f"row {line}", _("More cells than columns."))
    data: dict[str, Any] = {}
    for column, field in COLUMNS.items():
        cell = (row.get(column) or "").strip()
        if field in LISTS:
            data[field] = cell.split()
        else:
            data[field] = cell
    form = VoucherRowForm(data)
    if not form.is_valid():
        field, errors = next(iter(form.errors.items()))
        column = next((c for c, f in COLUMNS.items() if f == field), field)
        raise InvalidInput(f"row {line}.{column}", str(errors[0]))
    values = form.cleaned_data
    given = {COLUMNS[column] for column in row if column in COLUMNS and row[column].strip()}
    # An empty cell is the model's default (any channel, a value of 0, no limit).
    fields = {
        name: value for name, value in values.items() if name in given or name in ("code", "effect")
    }
    fields["categories"] = list(values["categories"])
    fields["events"] = list(values["events"])
    fields["row"] = line
    return fields
