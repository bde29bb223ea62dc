"""OCTO, the open standard by which resellers book with attraction suppliers (docs/octo.md): the
keys partners' systems sign in with, each partner's commission, how staff map visitor categories
to OCTO's unit types, and each OCTO booking, which is an order on the partner's account."""

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from orders.models import Order, VisitorCategory


class ApiKey(models.Model):
    """A partner's key for `Authorization: Bearer`: shown once, kept as an HMAC of it."""

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100, help_text="Which system of the partner uses it.")
    # Its first characters, kept readable so staff and partner can tell keys apart.
    prefix = models.CharField(max_length=12, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"


class PartnerTerms(models.Model):
    """What the museum keeps back for a partner (their commission, a share of the retail price),
    and whether the museum mails the partner's customers their tickets."""

    account = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="partner_terms"
    )
    commission_percent = models.DecimalField(
        "commission (%)",
        max_digits=5,
        decimal_places=2,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
    )
    # Off by default: a reseller delivers its own vouchers (the booking carries each ticket's QR
    # value and the PDF's link), and its customers did not ask the museum for mail.
    museum_sends_tickets = models.BooleanField(
        "the museum sends tickets",
        default=False,
        db_default=False,
        help_text="Email the booking's contact the museum's confirmation (with the tickets' PDF) "
        "and cancellation, as for the museum's own visitors. Off: the partner delivers the "
        "tickets itself and the museum mails its customers nothing.",
    )

    class Meta:
        verbose_name = "partner terms"
        verbose_name_plural = "partner terms"
        constraints = [
            models.CheckConstraint(
                name="commission_is_a_percentage",
                condition=Q(commission_percent__gte=0, commission_percent__lte=100),
            )
        ]

    def __str__(self):
        return f"Terms of {self.account}"


class UnitType(models.TextChoices):
    ADULT = "ADULT"
    CHILD = "CHILD"
    INFANT = "INFANT"
    SENIOR = "SENIOR"
    STUDENT = "STUDENT"
    YOUTH = "YOUTH"
    FAMILY = "FAMILY"
    OTHER = "OTHER"


class CategoryUnit(models.Model):
    """How OCTO names a visitor category (a unit's type), its ages and whether it asks for proof;
    staff set it. Ages left empty are the museum's none (OCTO's required integers then read 0
    and 100)."""

    category = models.OneToOneField(
        VisitorCategory, on_delete=models.CASCADE, primary_key=True, related_name="octo_unit"
    )
    unit_type = models.CharField(max_length=10, choices=UnitType.choices, default=UnitType.OTHER)
    min_age = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Empty: the museum sets no lowest age."
    )
    max_age = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Empty: the museum sets no highest age."
    )
    id_required = models.BooleanField(
        "ID required",
        default=False,
        db_default=False,
        help_text="The visitor must show proof at the door, e.g. a student card (OCTO's "
        "idRequired).",
    )

    class Meta:
        verbose_name = "OCTO unit"
        constraints = [
            models.CheckConstraint(
                name="octo_unit_ages_in_order",
                condition=Q(min_age__isnull=True)
                | Q(max_age__isnull=True)
                | Q(min_age__lte=F("max_age")),
                violation_error_message="The lowest age is at most the highest.",
            )
        ]

    def __str__(self):
        return f"{self.category} as {self.unit_type}"


class Booking(models.Model):
    """An OCTO booking: the reseller's `uuid` (its idempotency key, each partner's own) and
    references, and the order it is. A confirmation after the hold ran out places a new order,
    so the link moves."""

    # A UUID's canonical spelling (bookings from before a uuid had to be one keep theirs).
    uuid = models.CharField(max_length=100)
    partner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="octo_bookings"
    )
    order = models.OneToOneField(Order, on_delete=models.PROTECT, related_name="octo_booking")
    product_id = models.CharField(max_length=64)
    availability_id = models.CharField(max_length=40)
    reseller_reference = models.CharField(max_length=100, blank=True, db_index=True)
    notes = models.TextField(blank=True)
    cancellation_reason = models.CharField(max_length=500, blank=True)
    # The contact as OCTO sends it, returned as it came.
    contact = models.JSONField(default=dict)
    # The unit items as asked: [{"uuid", "unitId", "resellerReference"}], in ticket order.
    unit_items = models.JSONField(default=list)
    # The reseller's offer code (`octo/offers`: a voucher's code, kept as vouchers read it), asked
    # again when the booking's order is placed anew; empty: none.
    offer_code = models.CharField(max_length=40, blank=True, default="", db_default="")
    # What the museum nets once confirmed (retail less the commission), for the statement.
    net_total = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "OCTO booking"
        constraints = [
            # Per partner: one reseller's uuid neither clashes with nor reveals another's.
            models.UniqueConstraint(
                fields=["partner", "uuid"], name="octo_booking_uuid_per_partner"
            )
        ]

    def __str__(self):
        return self.uuid
