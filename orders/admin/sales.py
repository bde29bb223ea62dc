"""Orders, payments, refunds, visitor categories and accounts' sale limits for staff; the sales
summary per day and category, sales by tax rate per day or month, and what each sales partner
owes per month.

Orders are made through the API and never edited or deleted here: cancelling goes through the
same service as the API (orders.services.cancel_order), under the same locks.
"""

from datetime import date, timedelta
from typing import Literal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.urls import path
from django.utils import timezone
from modeltranslation.admin import TranslationAdmin

from audit.admin import AuditedAdmin
from audit.services import history
from museum.admin import ReadOnlyAdmin
from museum.admin_pages import (
    Table,
    VisitDateFilter,
    admin_page,
    csv_response,
    report_cells,
)
from museum.exceptions import MuseumProblem
from museum.forms import DATE_INPUT
from orders import selectors
from orders.admin.documents import SaleDocumentInline
from orders.admin.memberships import membership_sale_inlines
from orders.models import (
    Order,
    OrderStatus,
    Payment,
    Refund,
    RefundState,
    SaleLimits,
    Ticket,
    VisitorCategory,
)
from orders.services.cancellation import cancel_order
from orders.services.payments import retry_refund


@admin.register(VisitorCategory)
class VisitorCategoryAdmin(AuditedAdmin, TranslationAdmin):
    """The name in every shipped language (`name_de`...); a missing one is read in the museum's."""

    list_display = [
        "category",
        "name",
        "plural_name",
        "general_price",
        "tax_rate",
        "event_price_percent",
        "check_at_door",
        "active",
        "ordering",
    ]
    list_filter = ["active", "check_at_door"]
    search_fields = ["category", "name"]

    def has_delete_permission(self, request, obj=None):
        return False  # tickets keep their category: untick Active instead


class RecordInline(admin.TabularInline):
    """What an order's page lists of its record: read, never added or removed here."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class OrderTicketInline(RecordInline):
    model = Ticket
    fields = readonly_fields = (
        "confirmation_code",
        "category",
        "price",
        "slot",
        "cancelled_at",
        "checked_in_at",
    )
    show_change_link = True


class PaymentInline(RecordInline):
    model = Payment
    fields = readonly_fields = (
        "provider",
        "state",
        "amount",
        "reference",
        "info",
        "created_at",
        "confirmed_at",
    )


class RefundInline(RecordInline):
    model = Refund
    fields = readonly_fields = (
        "ticket",
        "amount",
        "state",
        "source",
        "error",
        "created_at",
        "cancelled_by",
    )


@admin.register(Order)
class OrderAdmin(ReadOnlyAdmin, AuditedAdmin):
    list_display = [
        "confirmation_code",
        "status",
        "date",
        "entry",
        "event",
        "email",
        "total",
        "channel",
        "created_at",
    ]
    # Emails still waiting: "Confirmation sent at" is empty (each attempt and its error are a task
    # result, under Django Tasks DB).
    list_filter = [
        "status",
        "channel",
        VisitDateFilter,
        "ticket_type",
        ("confirmation_sent_at", admin.EmptyFieldListFilter),
    ]
    list_select_related = ["event", "slot"]
    date_hierarchy = "date"
    search_fields = ["confirmation_code", "email", "tickets__confirmation_code"]
    fields = readonly_fields = (
        "confirmation_code",
        "status",
        "buyer",
        "email",
        "phone",
        "ticket_type",
        "date",
        "event",
        "slot",
        "total",
        "channel",
        "hold_expires_at",
        "created_at",
        "confirmed_at",
        "cancelled_at",
        "confirmation_sent_at",
    )
    inlines = [OrderTicketInline, PaymentInline, RefundInline, SaleDocumentInline]
    actions = ["cancel_selected_orders"]

    def get_inlines(self, request, obj):
        return [*self.inlines, *membership_sale_inlines(obj)]

    def history_records(self, obj):
        # An order's history tells its tickets' too: each one's check-in.
        return history(obj, also=obj.tickets.only("pk"))

    @admin.display(description="entry", ordering="slot__entry_time")
    def entry(self, order):
        return f"{order.slot.entry_time:%H:%M}" if order.slot_id else "—"

    def has_cancel_permission(self, request):
        return request.user.has_perm(selectors.CANCEL_ANY_ORDER)

    @admin.action(description="Cancel the selected orders (paid back)", permissions=["cancel"])
    def cancel_selected_orders(self, request, queryset):
        cancelled, refused = 0, []
        for order in queryset.exclude(status__in=[OrderStatus.CANCELLED, OrderStatus.EXPIRED]):
            try:
                cancel_order(order_id=order.pk, by=request.user)
                cancelled += 1
            except MuseumProblem as problem:
                refused.append(f"{order.confirmation_code}: {problem.detail}")
        self.message_user(request, f"Cancelled {cancelled} order(s).", messages.SUCCESS)
        for words in refused:
            self.message_user(request, words, messages.WARNING)

    def get_urls(self):
        sales = self.admin_site.admin_view(self.sales_view)
        taxes = self.admin_site.admin_view(self.tax_view)
        return [
            path("sales/", sales, name="orders_order_sales"),
            path("sales/taxes/", taxes, name="orders_order_taxes"),
            *super().get_urls(),
        ]

    def sales_view(self, request):
        """Sales per day, kind of visit and category, and takings per payment method, each
        gross, refunds and net with totals; with ?format=csv, the same two tables as a file."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        today = timezone.localdate()
        first, last = today - timedelta(days=7), today + timedelta(days=30)
        form = SalesRangeForm(request.GET or None)
        if form.is_valid():
            first = form.cleaned_data["first"] or first
            last = form.cleaned_data["last"] or last
        # The form shows the range the tables are for, asked for or not.
        form = SalesRangeForm({"first": first, "last": last})
        tables = sales_tables(selectors.sales_report(first=first, last=last))
        if request.GET.get("format") == "csv":
            return sales_csv(tables, first=first, last=last)
        return admin_page(
            self,
            request,
            "admin/orders/order/sales.html",
            title="Sales per day and visitor category",
            form=form,
            first=first,
            last=last,
            tables=tables,
        )

    def tax_view(self, request):
        """Sales by tax rate per day or month: sold, refunded and after refunds, each net, tax
        and gross, with totals per rate; with ?format=csv, the same two tables as a file."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = TaxRangeForm(request.GET or None)
        asked = form.cleaned_data if form.is_valid() else {}
        period: Literal["day", "month"] = "month" if asked.get("period") == "month" else "day"
        # By default, this month so far by day, or this year so far by month.
        today = timezone.localdate()
        last = asked.get("last") or today
        first = asked.get("first") or today.replace(
            month=1 if period == "month" else today.month, day=1
        )
        report = selectors.tax_report(first=first, last=last, period=period)
        # The form shows the range the tables are for (a month's report: whole months).
        form = TaxRangeForm({"first": report.first, "last": report.last, "period": period})
        tables = tax_tables(report)
        if request.GET.get("format") == "csv":
            return tax_csv(tables, report=report)
        return admin_page(
            self,
            request,
            "admin/orders/order/taxes.html",
            title="Sales by tax rate",
            form=form,
            report=report,
            tables=tables,
        )


class SalesRangeForm(forms.Form):
    first = forms.DateField(label="From", required=False, widget=DATE_INPUT)
    last = forms.DateField(label="To", required=False, widget=DATE_INPUT)


class TaxRangeForm(SalesRangeForm):
    period = forms.ChoiceField(
        label="Per",
        required=False,
        choices=[("day", "day"), ("month", "month")],
        widget=forms.RadioSelect,
    )


def sales_tables(report: selectors.SalesReport) -> list[Table]:
    """The report's three tables, each cell as the page and the CSV write it (report_cell: money
    with two decimal places, in MUSEUM_CURRENCY, which the headers name)."""
    money = f"({settings.MUSEUM_CURRENCY})"
    sales = Table(
        title="Sales per day, visit and category",
        header=[
            "Date",
            "Visit",
            "Visitor category",
            "Sold",
            f"Gross {money}",
            "Cancelled",
            f"Refunds {money}",
            f"Net {money}",
        ],
        rows=[
            report_cells(
                row["date"],
                row["what"],
                row["category__name"] or "",
                row["sold"],
                row["gross"],
                row["cancelled"],
                row["refunds"],
                row["net"],
            )
            for row in report.rows
        ],
        total=report_cells("Total", "", "", *(report.totals[name] for name in SALES_TOTALS)),
    )
    amounts = selectors.AMOUNTS
    takings = Table(
        title="Takings per payment method",
        header=["Paid by", "Payments", *(f"{name.capitalize()} {money}" for name in amounts)],
        rows=[
            report_cells(row["method"], row["payments"], *(row[name] for name in amounts))
            for row in report.takings
        ],
        total=report_cells(
            "Total", *(report.takings_totals[name] for name in ("payments", *amounts))
        ),
    )
    discounts = Table(
        title="Discounts by voucher tag (tickets still valid)",
        header=["Voucher tag", "Tickets", f"Discount {money}"],
        rows=[
            report_cells(row["tag"] or "(no tag)", row["tickets"], row["discount"])
            for row in report.discounts
        ],
        total=report_cells(
            "Total", report.discounts_total["tickets"], report.discounts_total["discount"]
        ),
    )
    return [sales, takings, discounts]


SALES_TOTALS = ("sold", "gross", "cancelled", "refunds", "net")


def sales_csv(tables: list[Table], *, first: date, last: date) -> HttpResponse:
    return tables_csv(f"sales-{first}-{last}.csv", f"Visits from {first} to {last}", tables)


def tables_csv(filename: str, heading: str, tables: list[Table]) -> HttpResponse:
    """A report's tables as its page shows them, one under the other, each under its title."""
    rows: list[list[str]] = []
    for table in tables:
        rows += [[], [table.title], table.header, *table.rows, table.total]
    return csv_response(filename, [heading], rows)


# The three amounts of each of a tax line's parts, in the tables' order.
TAX_PARTS = (("Sold", "sold"), ("Refunded", "refunded"), ("After refunds", "after_refunds"))


def tax_tables(report: selectors.TaxReport) -> list[Table]:
    """The report's two tables, per period and rate and per rate, each cell as the page and the
    CSV write it (report_cell: money and the rate with two decimal places)."""
    money = f"({settings.MUSEUM_CURRENCY})"
    amounts = [
        f"{part}: {name} {money}" for part, _ in TAX_PARTS for name in ("net", "tax", "gross")
    ]

    def cells(line: selectors.TaxLine) -> list:
        parts = [getattr(line, attribute) for _, attribute in TAX_PARTS]
        return [value for part in parts for value in (part.net, part.tax, part.gross)]

    period = {"day": "Day", "month": "Month"}[report.period]
    when = "{:%Y-%m}" if report.period == "month" else "{}"
    total = report_cells("Total", "", *cells(report.total))
    per_period = Table(
        title=f"Sales by tax rate per {report.period}",
        header=[period, "Tax rate (%)", *amounts],
        rows=[
            report_cells(when.format(line.period), line.rate, *cells(line)) for line in report.lines
        ],
        total=total,
    )
    per_rate = Table(
        title="Totals per tax rate",
        header=["Tax rate (%)", *amounts],
        rows=[report_cells(line.rate, *cells(line)) for line in report.by_rate],
        total=[total[0], *total[2:]],
    )
    return [per_period, per_rate]


def tax_csv(tables: list[Table], *, report: selectors.TaxReport) -> HttpResponse:
    first, last = report.first, report.last
    return tables_csv(
        f"sales-by-tax-rate-{report.period}-{first}-{last}.csv",
        f"Orders confirmed and refunds recorded from {first} to {last}",
        tables,
    )


@admin.register(Refund)
class RefundAdmin(admin.ModelAdmin):
    """A failed refund stays here with the provider's error until staff try it again."""

    list_display = ["order", "ticket", "amount", "state", "source", "error", "created_at"]
    list_filter = ["state", "source", "payment__provider"]
    list_select_related = ["ticket", "order"]
    search_fields = ["order__confirmation_code", "ticket__confirmation_code", "order__email"]
    date_hierarchy = "created_at"
    actions = ["try_again"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_readonly_fields(self, request, obj=None):
        # Changed only through the action below, which pays it back through its provider.
        return [field.name for field in Refund._meta.fields]

    @admin.action(description="Try the selected failed refunds again", permissions=["change"])
    def try_again(self, request, queryset):
        failed = list(queryset.filter(state=RefundState.FAILED).values_list("pk", flat=True))
        for refund_id in failed:
            retry_refund(refund_id=refund_id)
        self.message_user(request, f"{len(failed)} refund(s) to be paid back again.")


@admin.register(Payment)
class PaymentAdmin(ReadOnlyAdmin):
    list_display = ["order", "provider", "state", "amount", "info", "created_at", "confirmed_at"]
    list_filter = ["provider", "state"]
    list_select_related = ["order"]
    search_fields = ["order__confirmation_code", "reference", "order__email"]
    date_hierarchy = "created_at"

    def get_urls(self):
        statement = self.admin_site.admin_view(self.on_account_view)
        return [
            path("on-account/", statement, name="orders_payment_on_account"),
            *super().get_urls(),
        ]

    def on_account_view(self, request):
        """Per sales partner and month: what was sold on account, credited, and is due; as a
        page, or with ?format=csv as a file for the invoices."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = MonthForm(request.GET or None)
        month = timezone.localdate().replace(day=1)
        if form.is_valid() and form.cleaned_data["month"]:
            month = form.cleaned_data["month"]
        lines = selectors.on_account_statement(month=month)
        if request.GET.get("format") == "csv":
            return on_account_csv(lines, month=month)
        return admin_page(
            self,
            request,
            "admin/orders/payment/on_account.html",
            title=f"Sold on account, {month:%B %Y}",
            form=form,
            month=month,
            lines=lines,
        )


class MonthForm(forms.Form):
    month = forms.DateField(
        label="Month",
        required=False,
        input_formats=["%Y-%m"],
        widget=forms.DateInput(format="%Y-%m", attrs={"type": "month"}),
    )


ON_ACCOUNT_COLUMNS = ["partner", "month", "orders", "sold", "credited", "due", "currency"]


def on_account_csv(lines: list[selectors.OnAccountLine], *, month: date) -> HttpResponse:
    rows = [
        [
            line.partner,
            f"{month:%Y-%m}",
            line.orders,
            line.sold,
            line.credited,
            line.due,
            settings.MUSEUM_CURRENCY,
        ]
        for line in lines
    ]
    return csv_response(f"on-account-{month:%Y-%m}.csv", ON_ACCOUNT_COLUMNS, rows)


@admin.register(SaleLimits)
class SaleLimitsAdmin(AuditedAdmin):
    """An account's own limits on places: a shop or kiosk selling for many, or a partner."""

    list_display = ["account", "max_held_places", "max_places_per_day", "max_free_places_per_day"]
    search_fields = ["account__username"]
    autocomplete_fields = ["account"]
