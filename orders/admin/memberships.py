"""Memberships for staff: the types a museum sells (edited here, audited), the memberships, their
sales, visits and walk-ins (only read: the services sell, renew, redeem and cancel them, under
their locks and with their records), and the members' reports with their CSV files.

Registered when orders/admin/ (which Django's admin reads) imports it.
"""

from datetime import date, timedelta

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.urls import path
from django.utils import timezone
from modeltranslation.admin import TranslationAdmin

from audit.admin import AuditedAdmin
from audit.services import history
from museum.admin import ReadOnlyAdmin
from museum.admin_pages import Table, admin_page, csv_response, report_cells
from museum.exceptions import MuseumProblem
from museum.forms import DATE_INPUT
from orders import membership_reports as reports
from orders.models import (
    MemberEntry,
    Membership,
    MembershipSale,
    MembershipStatus,
    MembershipType,
    Order,
    Validity,
)
from orders.services.member_cards import reissue_card
from orders.services.memberships import SELL_MEMBERSHIPS


@admin.register(MembershipType)
class MembershipTypeAdmin(AuditedAdmin, TranslationAdmin):
    """Name and description in every shipped language (`name_fr`...); a missing one is read in
    the museum's. A price or validity changed applies to the sales that follow."""

    list_display = [
        "code",
        "name",
        "price",
        "tax_rate",
        "validity_months",
        "admits",
        "event_discount_percent",
        "members_today",
        "active",
        "ordering",
    ]
    list_filter = ["active"]
    search_fields = ["code", "name"]

    def get_queryset(self, request):
        members = reports.members_on(timezone.localdate())
        return super().get_queryset(request).annotate(members=members)

    @admin.display(description="members today", ordering="members")
    def members_today(self, kind):
        return kind.members

    def get_readonly_fields(self, request, obj=None):
        # The API's name for it: integrators' requests and webhooks' receivers know it by it.
        fields = super().get_readonly_fields(request, obj)
        return ["code", *fields] if obj is not None else fields

    def has_delete_permission(self, request, obj=None):
        return False  # memberships keep their type: untick Active instead


class RecordInline(admin.TabularInline):
    """What a membership's or an order's page lists of its record: read, never edited here."""

    extra = 0
    can_delete = False
    # The rows' related objects the inline shows, read with them.
    related: list[str] = []

    def get_queryset(self, request):
        return super().get_queryset(request).select_related(*self.related)

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class SaleInline(RecordInline):
    model = MembershipSale
    verbose_name_plural = "sales (each period paid for)"
    related = ["order", "membership"]  # its name says its membership
    fields = readonly_fields = (
        "order",
        "kind",
        "price",
        "valid_from",
        "valid_until",
        "cancelled_at",
    )


class OrderSaleInline(SaleInline):
    fields = readonly_fields = (
        "membership",
        "kind",
        "price",
        "valid_from",
        "valid_until",
        "cancelled_at",
    )


class VisitInline(RecordInline):
    model = Order
    fk_name = "membership"
    verbose_name = "member visit"
    verbose_name_plural = "member visits (reservations)"
    related = ["slot"]
    fields = readonly_fields = ("confirmation_code", "date", "slot", "status", "created_at")
    show_change_link = True


class EntryInline(RecordInline):
    model = MemberEntry
    verbose_name_plural = "walk-ins (untimed days)"
    related = ["admitted_by"]
    fields = readonly_fields = ("date", "people", "entered_at", "admitted_by")


class ExpiringFilter(admin.SimpleListFilter):
    """What a museum asks before reminding or renewing: whose validity ends soon, or has."""

    title = "validity"
    parameter_name = "expiring"

    def lookups(self, request, model_admin):
        return [
            ("7", "Ends within 7 days"),
            ("30", "Ends within 30 days"),
            ("lapsed", "Lapsed (last day past)"),
        ]

    def queryset(self, request, queryset):
        today = timezone.localdate()
        if self.value() in ("7", "30"):
            last = today + timedelta(days=int(self.value() or 0))
            return queryset.filter(
                status=MembershipStatus.ACTIVE, valid_until__gte=today, valid_until__lte=last
            )
        if self.value() == "lapsed":
            return queryset.filter(
                status__in=[MembershipStatus.ACTIVE, MembershipStatus.EXPIRED],
                valid_until__lt=today,
            )
        return queryset


@admin.register(Membership)
class MembershipAdmin(ReadOnlyAdmin, AuditedAdmin):
    """Memberships as the services left them: sold, renewed, redeemed and cancelled through the
    API and the desk (and an order's cancellation), never edited here."""

    list_display = [
        "card_code",
        "holder",
        "membership_type",
        "status_today",
        "valid_from",
        "valid_until",
        "email",
        "created_at",
    ]
    list_filter = ["status", "membership_type", ExpiringFilter]
    list_select_related = ["membership_type"]
    search_fields = ["holder_name", "email", "=card_code", "=gift_code"]
    search_help_text = "Search by holder name, email, card code or gift code."
    date_hierarchy = "created_at"
    fields = readonly_fields = (
        "id",
        "membership_type",
        "status",
        "holder_name",
        "email",
        "language",
        "buyer",
        "valid_from",
        "valid_until",
        "card_code",
        "gift_code",
        "redeemed_at",
        "created_at",
        "activated_at",
        "cancelled_at",
        "reminded_30_at",
        "reminded_7_at",
    )
    inlines = [SaleInline, VisitInline, EntryInline]
    actions = ["reissue_cards"]

    def has_reissue_permission(self, request):
        return request.user.has_perm(SELL_MEMBERSHIPS)

    @admin.action(
        description="Replace the selected members' cards (lost: the old ones stop admitting)",
        permissions=["reissue"],
    )
    def reissue_cards(self, request, queryset):
        replaced, refused = [], []
        for membership in queryset:
            try:
                replaced.append(reissue_card(membership=membership, by=request.user).card_code)
            except MuseumProblem as problem:
                refused.append(f"{membership.card_code}: {problem.detail}")
        if replaced:
            words = f"Replaced {len(replaced)} card(s); the new codes: {', '.join(replaced)}."
            self.message_user(request, words, messages.SUCCESS)
        for words in refused:
            self.message_user(request, words, messages.WARNING)

    def history_records(self, obj):
        # A membership's history tells its sales' too.
        return history(obj, also=MembershipSale.objects.filter(membership=obj).only("pk"))

    @admin.display(description="holder", ordering="holder_name")
    def holder(self, membership):
        if membership.holder_name:
            return membership.holder_name
        return "(gift, not redeemed)" if membership.gift_code else "–"

    @admin.display(description="today", ordering="status")
    def status_today(self, membership):
        # Whether it admits today, or why not: the door's answer (Membership.validity_on).
        return Validity(membership.validity_on(timezone.localdate())).label

    def get_urls(self):
        page = self.admin_site.admin_view(self.reports_view)
        return [path("reports/", page, name="orders_membership_reports"), *super().get_urls()]

    def reports_view(self, request):
        """Members per type today, begun, renewed and lapsed per month, member visits per day
        and unredeemed gifts; with ?format=csv&table=<name>, that table as a file."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        today = timezone.localdate()
        first, last = (today - timedelta(days=150)).replace(day=1), today
        form = ReportRangeForm(request.GET or None)
        if form.is_valid():
            first = form.cleaned_data["first"] or first
            last = form.cleaned_data["last"] or last
        form = ReportRangeForm({"first": first, "last": last})
        tables = member_tables(first=first, last=last, today=today)
        if request.GET.get("format") == "csv":
            name = request.GET.get("table", "")
            if name not in tables:
                raise Http404
            return table_csv(tables[name], f"members-{name}-{first}-{last}.csv")
        return admin_page(
            self,
            request,
            "admin/orders/membership/reports.html",
            title="Members' reports",
            form=form,
            first=first,
            last=last,
            tables=tables,
        )


@admin.register(MemberEntry)
class MemberEntryAdmin(ReadOnlyAdmin):
    """Who a member card let in at the door on an untimed day: the door writes it, staff read."""

    list_display = ["date", "membership", "holder", "people", "entered_at", "admitted_by"]
    list_select_related = ["membership", "admitted_by"]
    search_fields = ["=membership__card_code", "membership__holder_name"]
    date_hierarchy = "date"

    @admin.display(description="holder", ordering="membership__holder_name")
    def holder(self, entry):
        return entry.membership.holder_name


def membership_sale_inlines(order) -> list:
    """The inline an order's page shows when the order sells memberships."""
    if order is not None and order.sells_memberships:
        return [OrderSaleInline]
    return []


class ReportRangeForm(forms.Form):
    first = forms.DateField(label="From", required=False, widget=DATE_INPUT)
    last = forms.DateField(label="To", required=False, widget=DATE_INPUT)


def member_tables(*, first: date, last: date, today: date) -> dict[str, Table]:
    """The reports' tables by the name their CSV is asked for: members today and unredeemed
    gifts now, the months and the days of visits from `first` to `last`."""
    kinds = reports.active_members(day=today)
    months = reports.members_per_month(first=first, last=last, today=today)
    days = reports.member_visits(first=first, last=last)
    gifts = reports.unredeemed_gifts(today=today)
    return {
        "active": Table(
            title=f"Active members per type on {today:%d %B %Y}",
            header=["Type", "Code", "Members"],
            rows=[
                report_cells(line.membership_type.name, line.membership_type.code, line.members)
                for line in kinds
            ],
            total=report_cells("Total", "", sum(line.members for line in kinds)),
        ),
        "months": Table(
            title="New, renewed and lapsed per month",
            header=["Month", "Type", "New", "Renewed", "Lapsed"],
            rows=[
                report_cells(
                    f"{line.month:%Y-%m}", line.membership_type.name, *_month_counts([line])
                )
                for line in months
            ],
            total=report_cells("Total", "", *_month_counts(months)),
        ),
        "visits": Table(
            title="Member visits per day",
            header=[
                "Date",
                "Reservations",
                "Places reserved",
                "Checked in",
                "Walk-ins",
                "People walked in",
                "People",
            ],
            rows=[report_cells(day.date, *_visit_counts([day])) for day in days],
            total=report_cells("Total", *_visit_counts(days)),
        ),
        "gifts": Table(
            title="Gift memberships paid for and not redeemed",
            header=["Card code", "Type", "Bought by", "Email", "Bought on", "Age (days)", "Price"],
            rows=[
                report_cells(
                    gift.card_code,
                    gift.type_name,
                    gift.buyer,
                    gift.email,
                    gift.bought_on,
                    gift.age_days,
                    gift.price,
                )
                for gift in gifts
            ],
            total=report_cells(
                f"{len(gifts)} gift(s)", "", "", "", "", "", sum(gift.price for gift in gifts)
            ),
        ),
    }


def _month_counts(lines: list[reports.MonthLine]) -> list[int]:
    return [sum(getattr(line, name) for line in lines) for name in ("new", "renewed", "lapsed")]


VISIT_COUNTS = ("reservations", "places", "checked_in", "walk_ins", "walked_in", "people")


def _visit_counts(days: list[reports.VisitDay]) -> list[int]:
    return [sum(getattr(day, name) for day in days) for name in VISIT_COUNTS]


def table_csv(table: Table, filename: str) -> HttpResponse:
    return csv_response(filename, table.header, [*table.rows, table.total])
