"""Admin pages of our own, in the admin's look: an action's confirmation, a form of its own; and
what the admin's lists and reports share: the visit-date filter and the CSV file."""

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.contrib import admin
from django.contrib.admin import helpers
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone


def admin_page(model_admin, request, template: str, *, title: str, **context) -> TemplateResponse:
    """Render `template` (which extends templates/admin/intermediate_page.html) for a model.

    `action_checkbox_name` lets an action's page send the selected rows back with its answer.
    """
    return TemplateResponse(
        request,
        template,
        {
            **model_admin.admin_site.each_context(request),
            "title": title,
            "opts": model_admin.opts,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            **context,
        },
    )


class VisitDateFilter(admin.SimpleListFilter):
    """The visit dates the desk asks about (a model's `date`), counted from the museum's today."""

    title = "visit date"
    parameter_name = "when"
    LOOKUPS = {"today": "date", "upcoming": "date__gt", "past": "date__lt"}

    def lookups(self, request, model_admin):
        return [("today", "Today"), ("upcoming", "From tomorrow"), ("past", "Before today")]

    def queryset(self, request, queryset):
        lookup = self.LOOKUPS.get(self.value() or "")
        return queryset.filter(**{lookup: timezone.localdate()}) if lookup else queryset


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence]) -> HttpResponse:
    """A CSV file to download: `header`, then `rows`, each amount of money (a Decimal) with two
    decimal places and each date as ISO 8601, whatever report it comes from."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(header)
    writer.writerows([report_cell(value) for value in row] for row in rows)
    return response


def report_cell(value):
    """A report's value as its CSV and its page write it: money with two decimal places, a date
    as ISO 8601."""
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, date):
        return value.isoformat()
    return value


def report_cells(*values) -> list[str]:
    return [str(report_cell(value)) for value in values]


@dataclass(frozen=True)
class Table:
    """A report's table as its page and its CSV both show it: every cell already a string."""

    title: str
    header: list[str]
    rows: list[list[str]]
    total: list[str]
