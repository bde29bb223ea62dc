"""Tour programmes and guides for staff: a programme's languages, audiences, cap per guide and
fee; a guide's languages, audiences, weekly hours and exceptions (inlines), and the address of
their calendar feed; the assignments, only read (staff ask a guide at the desk, through
groups.services.guides.assign, and guides answer by their email's link); and beside the
assignments, the month's tours, hours and fees per guide with its CSV file."""

from datetime import date

from django import forms
from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.urls import path, reverse
from django.utils import timezone

from groups.models import (
    Guide,
    GuideAbsence,
    GuideAssignment,
    GuideAvailability,
    OrganisationKind,
    TourProgramme,
)
from groups.services import guides
from museum.admin import ReadOnlyAdmin
from museum.admin_pages import Table, admin_page, csv_response, report_cells
from museum.money import ZERO


def _languages():
    return [(code, settings.SHIPPED_LANGUAGES[code]) for code in settings.MUSEUM_LANGUAGES]


class SpeaksForm(forms.ModelForm):
    """Languages and audiences ticked from the museum's, not typed as JSON."""

    languages = forms.MultipleChoiceField(choices=_languages, widget=forms.CheckboxSelectMultiple)
    audiences = forms.MultipleChoiceField(
        choices=OrganisationKind.choices, widget=forms.CheckboxSelectMultiple
    )


@admin.register(TourProgramme)
class TourProgrammeAdmin(admin.ModelAdmin):
    form = SpeaksForm
    list_display = ["name", "duration_minutes", "max_people_per_guide", "fee", "fee_per", "active"]
    list_filter = ["active", "fee_per"]
    search_fields = ["name"]


class AvailabilityInline(admin.TabularInline):
    model = GuideAvailability
    extra = 1


class ExceptionInline(admin.TabularInline):
    model = GuideAbsence
    extra = 1
    fields = ["date", "available", "starts", "ends"]


@admin.register(Guide)
class GuideAdmin(admin.ModelAdmin):
    form = SpeaksForm
    list_display = ["name", "email", "user", "active"]
    list_filter = ["active"]
    search_fields = ["name", "email"]
    fields = ["name", "email", "user", "languages", "audiences", "active", "feed"]
    readonly_fields = ["feed"]
    raw_id_fields = ["user"]
    inlines = [AvailabilityInline, ExceptionInline]

    @admin.display(description="calendar feed (the guide's secret)")
    def feed(self, guide):
        if guide.pk is None:
            return "-"
        return settings.MUSEUM_PUBLIC_URL + reverse("guide-feed", args=[guide.feed_token])


@admin.register(GuideAssignment)
class GuideAssignmentAdmin(ReadOnlyAdmin):
    list_display = ["starts", "group", "guide", "state", "fee", "asked_at", "answered_at"]
    list_filter = ["state", "guide"]
    list_select_related = ["group", "guide"]
    date_hierarchy = "starts"
    search_fields = ["group__code", "group__organisation", "guide__name"]

    def get_urls(self):
        report = self.admin_site.admin_view(self.report_view)
        return [
            path("report/", report, name="groups_guideassignment_report"),
            *super().get_urls(),
        ]

    def report_view(self, request):
        """The month's tours per guide (?month=YYYY-MM); with ?format=csv, as a file."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = MonthForm(request.GET or None)
        month = timezone.localdate().replace(day=1)
        if form.is_valid() and form.cleaned_data["month"]:
            month = form.cleaned_data["month"]
        table = month_table(month)
        if request.GET.get("format") == "csv":
            rows = [*table.rows, table.total]
            return csv_response(f"tours-{month:%Y-%m}.csv", table.header, rows)
        return admin_page(
            self,
            request,
            "admin/groups/guideassignment/report.html",
            title=f"Tours per guide, {month:%B %Y}",
            form=MonthForm({"month": f"{month:%Y-%m}"}),
            month=month,
            tables=[table],
        )


class MonthForm(forms.Form):
    month = forms.DateField(
        label="Month",
        required=False,
        input_formats=["%Y-%m"],
        widget=forms.DateInput(format="%Y-%m", attrs={"type": "month"}),
    )


def month_table(month: date) -> Table:
    """The tours of `month` per guide (asked or confirmed), with hours and fees in
    MUSEUM_CURRENCY."""
    rows = guides.tours_by_guide(month)
    return Table(
        title=f"{month:%B %Y}",
        header=[
            "Guide",
            "Tours",
            "Confirmed",
            "Asked, no answer yet",
            "Hours",
            f"Fees ({settings.MUSEUM_CURRENCY})",
        ],
        rows=[
            report_cells(row.name, row.tours, row.confirmed, row.asked, row.hours, row.fees)
            for row in rows
        ],
        total=report_cells(
            "Total",
            sum(row.tours for row in rows),
            sum(row.confirmed for row in rows),
            sum(row.asked for row in rows),
            sum((row.hours for row in rows), ZERO),
            sum((row.fees for row in rows), ZERO),
        ),
    )
