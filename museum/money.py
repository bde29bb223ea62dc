"""The one rounding rule for money: half up, to the cent (0.005 is 0.01). Every amount the
service computes rather than reads (a share of an event's price, a line's net and tax) is
rounded here, once, per line; sums of lines are never rounded again."""

from decimal import ROUND_HALF_UP, Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

CENT = Decimal("0.01")
ZERO = Decimal("0.00")


def to_cent(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def tax_rate_field(help_text: str) -> models.DecimalField:
    """A catalogue entry's tax rate, a percent from 0 to 99.99 (orders.services.taxes)."""
    return models.DecimalField(
        "tax rate (%)",
        max_digits=4,
        decimal_places=2,
        default=ZERO,
        db_default=ZERO,
        validators=[MinValueValidator(ZERO), MaxValueValidator(Decimal("99.99"))],
        help_text=help_text,
    )
