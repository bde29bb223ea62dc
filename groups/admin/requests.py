"""Groups in the admin: the requests (looked at and searched; answered only through the services,
at the desk's request page, which each links to), the group rates and chaperone rules, and the
arrivals report per date range with its CSV."""

from datetime import date, timedelta

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Sum
from django.http import HttpResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from audit.admin import AuditedAdmin
from groups import reports
from groups.models import ChaperoneRule, GroupLine, GroupRate, GroupRequest
from groups.services.day import mark_no_show
from museum.admin import ReadOnlyAdmin
from museum.admin_pages import Table, VisitDateFilter, admin_page, report_cells
from museum.exceptions import MuseumProblem
from orders.admin.sales import SalesRangeForm, tables_csv

ANSWER = "groups.answer_group_requests"


class GroupLineInline(admin.TabularInline):
    model = GroupLine
    fields = ["category", "quantity"]
    readonly_fields = ["category", "quantity"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(GroupRequest)
class GroupRequestAdmin(ReadOnlyAdmin):
    """Read only: a request's status, places and order change through the services alone
    (approve, offer, decline at the desk; the door's arrivals; a no-show)."""

    list_display = [
        "code",
        "organisation",
        "date",
        "entry_time",
        "status",
        "booked",
        "expires_at",
        "arrived",
        "no_show",
        "desk_page",
    ]
    list_filter = ["status", VisitDateFilter, "organisation_kind", "no_show"]
    date_hierarchy = "date"
    search_fields = ["code", "organisation", "email", "contact_name", "order__confirmation_code"]
    list_select_related = ["order"]
    inlines = [GroupLineInline]
    actions = ["mark_no_shows"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(people=Sum("lines__quantity"))

    @admin.display(description="people", ordering="people")
    def booked(self, group):
        return group.people

    @admin.display(description="answer")
    def desk_page(self, group):
        return format_html('<a href="{}">Desk</a>', reverse("desk-group", args=[group.pk]))

    def has_answer_permission(self, request):
        return request.user.has_perm(ANSWER)

    @admin.action(description="Mark the selected groups as no-shows", permissions=["answer"])
    def mark_no_shows(self, request, queryset):
        marked = 0
        for group in queryset:
            try:
                mark_no_show(request_id=group.pk, by=request.user)
                marked += 1
            except MuseumProblem as problem:
                self.message_user(request, f"{group.code}: {problem.detail}", messages.WARNING)
        self.message_user(request, f"Marked {marked} group(s) as no-shows.", messages.SUCCESS)

    def get_urls(self):
        arrivals = self.admin_site.admin_view(self.arrivals_view)
        return [
            path("arrivals/", arrivals, name="groups_grouprequest_arrivals"),
            *super().get_urls(),
        ]

    def arrivals_view(self, request):
        """Per group visit of a date range: booked, arrived, no-show, revenue, paid, due, with
        totals; ?format=csv, the same tables as a file. By default this month."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = SalesRangeForm(request.GET or None)
        asked = form.cleaned_data if form.is_valid() else {}
        today = timezone.localdate()
        first = asked.get("first") or today.replace(day=1)
        last = asked.get("last") or _month_end(first)
        report = reports.arrivals_report(first=first, last=last)
        form = SalesRangeForm({"first": first, "last": last})
        tables = arrivals_tables(report)
        if request.GET.get("format") == "csv":
            return arrivals_csv(tables, first=first, last=last)
        return admin_page(
            self,
            request,
            "admin/groups/grouprequest/arrivals.html",
            title="Group arrivals and revenue",
            form=form,
            report=report,
            tables=tables,
        )


def _month_end(day: date) -> date:
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)


def arrivals_tables(report: reports.ArrivalsReport) -> list[Table]:
    money = f"({settings.MUSEUM_CURRENCY})"
    totals = report.totals
    return [
        Table(
            title="Group visits",
            header=[
                "Date",
                "Group",
                "Organisation",
                "Booked",
                "Arrived",
                "No-show",
                f"Revenue {money}",
                f"Paid {money}",
                f"Due {money}",
            ],
            rows=[
                report_cells(
                    line.date,
                    line.code,
                    line.organisation,
                    line.booked,
                    "" if line.arrived is None else line.arrived,
                    "yes" if line.no_show else "no",
                    line.revenue,
                    line.paid,
                    line.due,
                )
                for line in report.lines
            ],
            total=report_cells(
                "Total",
                f"{totals['groups']} groups",
                "",
                totals["booked"],
                totals["arrived"],
                totals["no_shows"],
                totals["revenue"],
                totals["paid"],
                totals["due"],
            ),
        )
    ]


def arrivals_csv(tables: list[Table], *, first: date, last: date) -> HttpResponse:
    return tables_csv(
        f"group-arrivals-{first}-{last}.csv", f"Group visits from {first} to {last}", tables
    )


@admin.register(GroupRate)
class GroupRateAdmin(AuditedAdmin):
    list_display = ["category", "min_people", "price"]
    list_filter = ["category"]
    list_select_related = ["category"]


@admin.register(ChaperoneRule)
class ChaperoneRuleAdmin(AuditedAdmin):
    list_display = [
        "name",
        "pupil_category",
        "adult_category",
        "free_adults",
        "per_pupils",
        "extra_price",
    ]
    list_select_related = ["pupil_category", "adult_category"]
