"""Receipts, invoices and credit notes for staff: read only, as issued (orders.services.receipts
issues them; nothing here changes or deletes one), each with its PDF, and listed on its order's
page."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from museum.admin import ReadOnlyAdmin
from orders import receipts
from orders.models import SaleDocument


def pdf_link(document: SaleDocument) -> str:
    url = reverse("admin:orders_saledocument_pdf", args=[document.pk])
    return format_html('<a href="{}" target="_blank">{}</a>', url, document.number)


class SaleDocumentInline(admin.TabularInline):
    """What an order's page lists of its documents, each number a link to its PDF."""

    model = SaleDocument
    fk_name = "order"
    extra = 0
    can_delete = False
    fields = readonly_fields = ("document", "kind", "issued_at", "total", "tax", "corrects")

    def has_add_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("corrects").defer("pdf")

    @admin.display(description="number")
    def document(self, document: SaleDocument) -> str:
        return pdf_link(document)


@admin.register(SaleDocument)
class SaleDocumentAdmin(ReadOnlyAdmin):
    list_display = ["number", "kind", "order", "issued_at", "total", "tax", "corrects"]
    list_filter = ["kind"]
    list_select_related = ["order", "corrects"]
    search_fields = ["number", "order__confirmation_code", "company"]
    date_hierarchy = "issued_at"
    fields = readonly_fields = (
        "document",
        "kind",
        "order",
        "issued_at",
        "language",
        "buyer_name",
        "company",
        "address",
        "vat_id",
        "corrects",
        "printed_lines",
        "printed_taxes",
        "printed_payments",
        "total",
        "tax",
    )

    def get_queryset(self, request):
        return super().get_queryset(request).defer("pdf")

    @admin.display(description="number")
    def document(self, document: SaleDocument) -> str:
        return pdf_link(document)

    @admin.display(description="lines")
    def printed_lines(self, document: SaleDocument) -> str:
        return format_html_join(
            "",
            "<div>{} × {} at {}: {} ({} %: net {}, tax {})</div>",
            (
                (line["quantity"], line["description"], line["unit"], line["gross"])
                + (line["rate"], line["net"], line["tax"])
                for line in document.lines
            ),
        )

    @admin.display(description="totals per rate")
    def printed_taxes(self, document: SaleDocument) -> str:
        return format_html_join(
            "",
            "<div>{} %: net {}, tax {}, gross {}</div>",
            ((t["rate"], t["net"], t["tax"], t["gross"]) for t in document.taxes),
        )

    @admin.display(description="payments")
    def printed_payments(self, document: SaleDocument) -> str:
        return format_html_join(
            "",
            "<div>{} {} {}: {}</div>",
            (
                (paid["date"], paid["provider"] or "by hand", paid["method"], paid["amount"])
                for paid in document.payments
            ),
        )

    def get_urls(self):
        pdf = self.admin_site.admin_view(self.pdf_view)
        return [path("<int:pk>/pdf/", pdf, name="orders_saledocument_pdf"), *super().get_urls()]

    def pdf_view(self, request, pk: int):
        if not self.has_view_permission(request):
            raise PermissionDenied
        documents = SaleDocument.objects.select_related("order", "corrects")
        document = get_object_or_404(documents, pk=pk)
        kept = receipts.document_pdf(document)
        response = HttpResponse(bytes(kept.pdf), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="{receipts.filename(kept)}"'
        return response
