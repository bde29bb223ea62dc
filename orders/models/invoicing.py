"""The sale's documents for the buyer and the accountant: receipts, invoices and credit notes,
each numbered from a gapless series and never edited once issued (orders.services.receipts).

A document keeps everything it prints as it was when it was issued (the lines, their tax, the
payments, the totals per rate, the buyer): it is never recomputed from the live order, so a
rate, a name or a price changed later changes no document. A cancellation after it issues a
credit note, a document of its own series whose amounts are negative: the sum of an order's
documents is what the order kept.
"""

from django.db import models
from django.db.models import F, Q

from .sale import Order


class NumberSeries(models.Model):
    """The last number given in one series (a prefix, a year): taken under this row's lock in
    the transaction that issues the document, so a rollback gives the number back."""

    prefix = models.CharField(max_length=10)
    year = models.PositiveSmallIntegerField()
    last = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = "number series"
        verbose_name_plural = "number series"
        constraints = [
            models.UniqueConstraint(fields=["prefix", "year"], name="one_number_series_a_year")
        ]

    def __str__(self):
        return f"{self.prefix}{self.year}: {self.last}"


class DocumentKind(models.TextChoices):
    RECEIPT = "receipt", "Receipt"
    INVOICE = "invoice", "Invoice"
    CREDIT_NOTE = "credit_note", "Credit note"


class SaleDocument(models.Model):
    """A receipt, invoice or credit note of an order, as issued: `lines`, `payments` and
    `taxes` are its snapshot (amounts as strings of Decimals), `total` and `tax` their sums. A
    credit note's amounts are negative and it names the document it `corrects`."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="documents")
    kind = models.CharField(max_length=12, choices=DocumentKind.choices)
    number = models.CharField(max_length=30, unique=True)
    issued_at = models.DateTimeField()
    # The language it is worded in (its order's): its PDF always speaks it.
    language = models.CharField(max_length=8)
    currency = models.CharField(max_length=3)
    buyer_name = models.CharField(max_length=100, blank=True)
    # An invoice's buyer: a company (a partner, a school), its address and VAT id.
    company = models.CharField(max_length=200, blank=True)
    address = models.CharField(max_length=500, blank=True)
    vat_id = models.CharField("VAT id", max_length=40, blank=True)
    # [{"description", "quantity", "unit", "rate", "net", "tax", "gross"[, "donation": true]}, ...]
    lines = models.JSONField()
    # [{"provider", "method", "amount", "date"}, ...]
    payments = models.JSONField(default=list)
    # [{"rate", "net", "tax", "gross"}, ...]: orders.services.taxes.totals_by_rate of its lines.
    taxes = models.JSONField()
    total = models.DecimalField(max_digits=10, decimal_places=2)
    tax = models.DecimalField(max_digits=10, decimal_places=2)
    # The museum's charity statement as printed under its donation lines (a line's "donation"
    # is true), in its language (MUSEUM_CHARITY_STATEMENT); blank without donations or one.
    charity_statement = models.TextField(blank=True, default="", db_default="")
    corrects = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="credit_notes"
    )
    # An invoice issued anew after its order changed (a group's numbers): the one it replaces,
    # which a credit note cancelled in full first.
    replaces = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="replaced_by"
    )
    # An invoice's terms of payment: [{"kind": "deposit" or "balance", "amount", "due":
    # "YYYY-MM-DD"}, ...] (a group's); empty: paid as issued.
    terms = models.JSONField(default=list, db_default=[], blank=True)
    # Its PDF, made once on its first request (orders.receipts), outside any locking
    # transaction; empty until then.
    pdf = models.BinaryField(default=b"", editable=False)
    etag = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        ordering = ["issued_at", "pk"]
        verbose_name = "sale document"
        indexes = [models.Index(fields=["order", "issued_at"], name="documents_of_order")]
        constraints = [
            # A credit note corrects a receipt or invoice and takes money back; they take it.
            models.CheckConstraint(
                name="credit_note_corrects_and_is_negative",
                condition=Q(kind="credit_note", corrects__isnull=False, total__lte=0)
                | (~Q(kind="credit_note") & Q(corrects__isnull=True, total__gte=0)),
            ),
            # Issued once: a change after it is a credit note.
            models.UniqueConstraint(
                fields=["order"],
                condition=Q(corrects__isnull=True, replaces__isnull=True),
                name="one_receipt_or_invoice_per_order",
            ),
            models.CheckConstraint(
                name="only_an_invoice_replaces",
                condition=Q(replaces__isnull=True) | Q(kind="invoice"),
            ),
            models.CheckConstraint(
                name="document_tax_within_total",
                condition=Q(total__gte=0, tax__gte=0, tax__lte=F("total"))
                | Q(total__lte=0, tax__lte=0, tax__gte=F("total")),
            ),
        ]

    def __str__(self):
        return self.number

    def save(self, *args, **kwargs):
        # Issued once: what it told a buyer or an accountant is never changed (its PDF, kept
        # once made, is written by orders.receipts with a conditional UPDATE, not here).
        if not self._state.adding:
            raise ValueError("An issued document is never changed: issue a credit note instead.")
        super().save(*args, **kwargs)

    @property
    def is_credit_note(self) -> bool:
        return self.kind == DocumentKind.CREDIT_NOTE
