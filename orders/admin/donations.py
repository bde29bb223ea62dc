"""Donations in the admin: the funds (translated, like the visitor categories), the donations
given with staff's refund of them (the same service as the API's), and the report per fund and
month with its CSV."""

from datetime import date

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.urls import path
from django.utils import timezone
from modeltranslation.admin import TranslationAdmin

from audit.admin import AuditedAdmin
from museum.admin import ReadOnlyAdmin
from museum.admin_pages import Table, admin_page, report_cells
from museum.exceptions import MuseumProblem
from orders import selectors
from orders.admin.sales import SalesRangeForm, tables_csv
from orders.models import Donation, Fund
from orders.services.donations import refund_donation


@admin.register(Fund)
class FundAdmin(AuditedAdmin, TranslationAdmin):
    """The name and description in every shipped language (`name_de`...); a missing one is read
    in the museum's."""

    list_display = ["name", "minimum", "maximum", "suggested_amounts", "active", "ordering"]
    list_filter = ["active"]
    search_fields = ["name"]

    def has_delete_permission(self, request, obj=None):
        return False  # donations keep their fund: untick Active instead


@admin.register(Donation)
class DonationAdmin(ReadOnlyAdmin):
    list_display = ["order", "fund", "amount", "created_at", "cancelled_at"]
    list_filter = ["fund"]
    list_select_related = ["order", "fund"]
    search_fields = ["order__confirmation_code", "order__email"]
    date_hierarchy = "created_at"
    actions = ["refund_selected"]

    def has_refund_permission(self, request):
        return request.user.has_perm(selectors.CANCEL_ANY_ORDER)

    @admin.action(description="Refund the selected donations (paid back)", permissions=["refund"])
    def refund_selected(self, request, queryset):
        refunded, refused = 0, []
        for donation in queryset.select_related("order"):
            try:
                refund_donation(
                    order_id=donation.order_id, donation_id=donation.pk, by=request.user
                )
                refunded += 1
            except MuseumProblem as problem:
                refused.append(f"{donation.order.confirmation_code}: {problem.detail}")
        self.message_user(request, f"Refunded {refunded} donation(s).", messages.SUCCESS)
        for words in refused:
            self.message_user(request, words, messages.WARNING)

    def get_urls(self):
        funds = self.admin_site.admin_view(self.funds_view)
        return [path("funds/", funds, name="orders_donation_funds"), *super().get_urls()]

    def funds_view(self, request):
        """Donations per month and fund, given, refunded and net, with totals; with
        ?format=csv, the same table as a file. By default this year so far."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = SalesRangeForm(request.GET or None)
        asked = form.cleaned_data if form.is_valid() else {}
        today = timezone.localdate()
        report = selectors.fund_report(
            first=asked.get("first") or today.replace(month=1, day=1),
            last=asked.get("last") or today,
        )
        form = SalesRangeForm({"first": report.first, "last": report.last})
        tables = fund_tables(report)
        if request.GET.get("format") == "csv":
            return fund_csv(tables, first=report.first, last=report.last)
        return admin_page(
            self,
            request,
            "admin/orders/donation/funds.html",
            title="Donations per fund and month",
            form=form,
            report=report,
            tables=tables,
        )


def fund_tables(report) -> list[Table]:
    money = f"({settings.MUSEUM_CURRENCY})"
    totals = report.totals
    return [
        Table(
            title="Donations per month and fund",
            header=[
                "Month",
                "Fund",
                "Donations",
                f"Given {money}",
                f"Refunded {money}",
                f"Net {money}",
            ],
            rows=[
                report_cells(
                    f"{line.month:%Y-%m}",
                    line.fund,
                    line.donations,
                    line.given,
                    line.refunded,
                    line.net,
                )
                for line in report.lines
            ],
            total=report_cells(
                "Total",
                "",
                totals["donations"],
                totals["given"],
                totals["refunded"],
                totals["net"],
            ),
        )
    ]


def fund_csv(tables: list[Table], *, first: date, last: date) -> HttpResponse:
    return tables_csv(f"donations-{first}-{last}.csv", f"Donations from {first} to {last}", tables)
