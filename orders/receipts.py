"""A receipt, invoice or credit note as a PDF, drawn from what the document kept when it was
issued (orders.services.receipts), in its language, with the fonts of the tickets' PDF
(orders.documents); made on its first request, outside any transaction that locks a row, and
kept on the document: an issued document prints the same every time."""

import hashlib
from decimal import Decimal
from typing import cast

from django.conf import settings
from django.core.mail import EmailMessage
from django.utils import timezone
from django.utils.dateparse import parse_date
from django.utils.translation import gettext as _
from fpdf import FPDF
from fpdf.enums import XPos, YPos

from museum import i18n
from museum.i18n import day_in_words, money
from museum.text import one_line
from orders.documents import MARGIN, PAPER
from orders.drawing import FONTS
from orders.models import DocumentKind, Order, SaleDocument
from orders.providers import DESK, ON_ACCOUNT
from orders.selectors import documents_of

INK, GREY = (20, 20, 20), (90, 90, 90)
# The lines' columns, in mm: what, how many, each, rate, net, tax, gross (the rest of the page
# is the description's).
COLUMNS = (0, 10, 22, 20, 22, 20, 24)


def document_pdf(document: SaleDocument) -> SaleDocument:
    """The document with its PDF: the kept one, or made now and kept (two first requests at
    once both make it; the first kept stays)."""
    if document.etag:
        return document
    with i18n.speaking(document.language):
        made = make_pdf(document)
    etag = hashlib.sha256(made).hexdigest()[:32]
    SaleDocument.objects.filter(pk=document.pk, etag="").update(pdf=made, etag=etag)
    return SaleDocument.objects.get(pk=document.pk)


def attach_documents(message: EmailMessage, order: Order) -> None:
    """The one place an order's email gets its documents: each one issued (its receipt or
    invoice, and the credit notes since), as a PDF."""
    for document in documents_of(order.pk).select_related("order"):
        kept = document_pdf(document)
        message.attach(filename(kept), bytes(kept.pdf), "application/pdf")


def filename(document: SaleDocument) -> str:
    return f"{document.number}.pdf"


def title_of(document: SaleDocument) -> str:
    """Its kind and number, in the active language: "Receipt R2026-000001"."""
    words = {
        DocumentKind.RECEIPT: _("Receipt %(number)s"),
        DocumentKind.INVOICE: _("Invoice %(number)s"),
        DocumentKind.CREDIT_NOTE: _("Credit note %(number)s"),
    }[DocumentKind(document.kind)]
    return words % {"number": document.number}


def paid_how(provider: str, method: str) -> str:
    """A payment's (or refund's) way, in the buyer's words."""
    if provider == DESK:
        return _("Cash at the desk") if method == "cash" else _("Card at the desk")
    if provider == ON_ACCOUNT:
        return _("On account")
    if provider == "":
        return _("By hand")
    if provider == "stripe":
        return _("Card, online")
    return _("Online (%(provider)s)") % {"provider": provider}


def make_pdf(document: SaleDocument) -> bytes:
    """The document drawn on one page (more if its lines need them), in the active language."""
    pdf = FPDF(format=PAPER[settings.MUSEUM_PAPER_SIZE])
    pdf.add_font("DejaVu", "", FONTS / "DejaVuSans.ttf")
    pdf.add_font("DejaVu", "B", FONTS / "DejaVuSans-Bold.ttf")
    pdf.set_title(title_of(document))
    pdf.set_author(one_line(settings.MUSEUM_NAME))
    pdf.set_lang(document.language)
    pdf.set_margins(MARGIN, MARGIN)
    pdf.set_auto_page_break(True, margin=MARGIN)
    pdf.add_page()
    _heading(pdf, document)
    _buyer(pdf, document)
    _lines(pdf, document)
    _taxes(pdf, document)
    _payments(pdf, document)
    _terms(pdf, document)
    if document.charity_statement:
        pdf.ln(4)
        _text(pdf, document.charity_statement, size=9, colour=GREY)
    return bytes(pdf.output())


def _text(pdf: FPDF, text: str, *, size: float = 10, bold: bool = False, colour=INK) -> None:
    if not text:
        return
    pdf.set_font("DejaVu", "B" if bold else "", size)
    pdf.set_text_color(*colour)
    pdf.multi_cell(pdf.epw, size * 0.5, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)


def _heading(pdf: FPDF, document: SaleDocument) -> None:
    _text(pdf, one_line(settings.MUSEUM_NAME), size=18, bold=True)
    for part in settings.MUSEUM_ADDRESS.split(","):
        _text(pdf, part.strip(), colour=GREY)
    if settings.MUSEUM_TAX_NUMBER:
        _text(pdf, _("Tax number: %(number)s") % {"number": settings.MUSEUM_TAX_NUMBER})
    pdf.ln(6)
    _text(pdf, title_of(document), size=16, bold=True)
    issued = day_in_words(timezone.localdate(document.issued_at))
    _text(pdf, _("Date: %(day)s") % {"day": issued})
    _text(pdf, _("Order: %(code)s") % {"code": document.order.confirmation_code})
    if document.corrects_id:
        corrected = document.corrects.number  # type: ignore[union-attr]
        _text(pdf, _("Corrects: %(number)s") % {"number": corrected}, bold=True)
    pdf.ln(4)


def _buyer(pdf: FPDF, document: SaleDocument) -> None:
    if not (document.company or document.buyer_name):
        return
    _text(pdf, _("Bill to") if document.company else _("Buyer"), bold=True)
    _text(pdf, one_line(document.company))
    _text(pdf, one_line(document.buyer_name))
    for part in document.address.split(","):
        _text(pdf, part.strip())
    if document.vat_id:
        _text(pdf, _("VAT id: %(number)s") % {"number": document.vat_id})
    pdf.ln(4)


def _row(pdf: FPDF, cells: list[str], *, bold: bool = False, widths=COLUMNS) -> None:
    """One row of a table: the first cell takes what the others leave, wrapped; the others are
    amounts, right-aligned on its first line."""
    pdf.set_font("DejaVu", "B" if bold else "", 9)
    pdf.set_text_color(*INK)
    first = pdf.epw - sum(widths[1:])
    # A dry run's HEIGHT output is a float (fpdf2's return type names every output).
    height = cast(float, pdf.multi_cell(first, 5, cells[0], dry_run=True, output="HEIGHT"))
    if pdf.will_page_break(height):
        pdf.add_page()
    top = pdf.get_y()
    pdf.multi_cell(first, 5, cells[0], align="L", new_x=XPos.RIGHT, new_y=YPos.TOP)
    for width, cell in zip(widths[1:], cells[1:], strict=True):
        pdf.cell(width, 5, cell, align="R")
    pdf.set_xy(MARGIN, top + height + 1)


def _rate(rate: str) -> str:
    return f"{Decimal(rate).normalize():f} %"


def _lines(pdf: FPDF, document: SaleDocument) -> None:
    _row(
        pdf,
        [_("Description"), _("Qty"), _("Each"), _("Tax rate"), _("Net"), _("Tax"), _("Total")],
        bold=True,
    )
    sold = [line for line in document.lines if not line.get("donation")]
    given = [line for line in document.lines if line.get("donation")]
    for line in sold:
        _line_row(pdf, line)
    if given:
        # Apart from what was sold: a gift, untaxed, under the museum's charity statement.
        pdf.ln(2)
        _text(pdf, _("Donations"), bold=True, size=9)
        for line in given:
            _line_row(pdf, line)
    pdf.ln(4)


def _line_row(pdf: FPDF, line: dict) -> None:
    _row(
        pdf,
        [
            line["description"],
            str(line["quantity"]),
            money(Decimal(line["unit"])),
            _rate(line["rate"]),
            money(Decimal(line["net"])),
            money(Decimal(line["tax"])),
            money(Decimal(line["gross"])),
        ],
    )


# The totals table's columns: the rate, its net, tax and gross under the lines' own.
TOTAL_COLUMNS = (0, 22, 20, 24)


def _taxes(pdf: FPDF, document: SaleDocument) -> None:
    _row(pdf, [_("Tax rate"), _("Net"), _("Tax"), _("Total")], bold=True, widths=TOTAL_COLUMNS)
    for rate in document.taxes:
        _row(
            pdf,
            [
                _rate(rate["rate"]),
                money(Decimal(rate["net"])),
                money(Decimal(rate["tax"])),
                money(Decimal(rate["gross"])),
            ],
            widths=TOTAL_COLUMNS,
        )
    net = document.total - document.tax
    _row(
        pdf,
        [_("Total"), money(net), money(document.tax), money(document.total)],
        bold=True,
        widths=TOTAL_COLUMNS,
    )
    pdf.ln(4)


def _terms(pdf: FPDF, document: SaleDocument) -> None:
    """An invoice paid later: what is due by when (a group's deposit and balance), and the
    invoice it replaces after a change."""
    if document.replaces is not None:
        _text(pdf, _("Replaces invoice %(number)s.") % {"number": document.replaces.number})
    if not document.terms:
        return
    _text(pdf, _("To pay"), bold=True)
    for term in document.terms:
        day = parse_date(term["due"])
        words = {
            "what": _("Deposit") if term["kind"] == "deposit" else _("Balance"),
            "day": day_in_words(day) if day else "",
            "amount": money(Decimal(term["amount"])),
        }
        _text(pdf, _("%(what)s: %(amount)s by %(day)s") % words)
    pdf.ln(4)


def _payments(pdf: FPDF, document: SaleDocument) -> None:
    if not document.payments:
        return
    _text(pdf, _("Paid back") if document.is_credit_note else _("Paid"), bold=True)
    for payment in document.payments:
        day = parse_date(payment["date"])
        words = {
            "how": paid_how(payment["provider"], payment["method"]),
            "day": day_in_words(day) if day else "",
            "amount": money(Decimal(payment["amount"])),
        }
        _text(pdf, _("%(how)s, %(day)s: %(amount)s") % words)
