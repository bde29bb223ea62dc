"""What the museum sells and at what price: visitor categories (a visit's tickets) and
membership types."""

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from museum.money import tax_rate_field

# What an order's line calls a member's free place (orders.services.member_visits): no visitor
# category, so no category may take that code (it would never be sold).
MEMBER_CATEGORY = "member"


class VisitorCategory(models.Model):
    """A kind of visitor and what they pay: adult, child, student..."""

    category = models.SlugField(
        "code", max_length=40, unique=True, help_text="What the API calls it, e.g. 'child'."
    )
    # The name of one visitor ("Adult", "Erwachsener") and of several ("Adults", "Erwachsene"):
    # "1 Erwachsener", "2 Erwachsene" in the email and on the cancel page (counted).
    name = models.CharField(max_length=100)
    plural_name = models.CharField(
        "name for several",
        max_length=100,
        blank=True,
        help_text="E.g. 'Adults'; empty: the name serves for any number.",
    )
    general_price = models.DecimalField(
        "general-admission price",
        max_digits=8,
        decimal_places=2,
        validators=[MinValueValidator(Decimal("0"))],
    )
    pay_what_you_want = models.BooleanField(
        "pay what you want",
        default=False,
        help_text="Its general-entry buyers name what they pay, at least its general price "
        "(a free-entry day asking for a contribution).",
    )
    tax_rate = tax_rate_field("Of its general-entry tickets (an event's are at the event's rate).")
    event_price_percent = models.PositiveSmallIntegerField(
        "share of an event's price (%)",
        default=100,
        validators=[MaxValueValidator(100)],
        help_text="What this visitor pays of a special event's price, in percent.",
    )
    check_at_door = models.BooleanField(
        "check proof at the door",
        default=False,
        help_text="The door asks staff to check proof of age or status.",
    )
    needs_companion = models.BooleanField(
        default=False,
        help_text="Sold only beside a ticket of a category that does not need one (e.g. infants "
        "with an adult).",
    )
    active = models.BooleanField(default=True, help_text="Sold only while active.")
    ordering = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first.")

    class Meta:
        ordering = ["ordering", "category"]
        verbose_name = "visitor category"
        verbose_name_plural = "visitor categories"
        constraints = [
            models.CheckConstraint(
                name="category_price_not_negative", condition=Q(general_price__gte=0)
            ),
            models.CheckConstraint(
                name="category_tax_rate_not_negative", condition=Q(tax_rate__gte=0)
            ),
            models.CheckConstraint(
                name="category_event_percent_at_most_100",
                condition=Q(event_price_percent__lte=100),
            ),
            models.CheckConstraint(
                name="category_code_not_member",
                condition=~Q(category=MEMBER_CATEGORY),
                violation_error_message=(
                    f"The code '{MEMBER_CATEGORY}' names a member's free place; choose another."
                ),
            ),
        ]

    def __str__(self):
        return self.name

    def counted(self, count: int) -> str:
        """Its name for `count` visitors: the name for one, the plural name for more. Every
        shipped language says one thing with its singular, and more (the only counts a line
        has) with its plural."""
        return self.name if count == 1 else self.plural_name or self.name


class MembershipType(models.Model):
    """What a museum sells as a membership: an annual pass for one, two or a family."""

    code = models.SlugField(
        max_length=40, unique=True, help_text="What the API calls it, e.g. 'family'."
    )
    name = models.CharField(max_length=100)
    description = models.TextField(max_length=2000, blank=True)
    price = models.DecimalField(
        max_digits=8, decimal_places=2, validators=[MinValueValidator(Decimal("0"))]
    )
    tax_rate = tax_rate_field("Of its sales, new, gift or renewal.")
    validity_months = models.PositiveSmallIntegerField(
        "valid for (months)", default=12, validators=[MinValueValidator(1), MaxValueValidator(120)]
    )
    admits = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text="People one visit admits: 1 for an individual, 2 for a dual, 6 for a family.",
    )
    event_discount_percent = models.PositiveSmallIntegerField(
        "discount on special events (%)", default=0, validators=[MaxValueValidator(100)]
    )
    active = models.BooleanField(default=True, help_text="Sold only while active.")
    ordering = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first.")

    class Meta:
        ordering = ["ordering", "code"]
        verbose_name = "membership type"
        constraints = [
            models.CheckConstraint(
                name="membership_type_price_not_negative", condition=Q(price__gte=0)
            ),
            models.CheckConstraint(
                name="membership_type_tax_rate_not_negative", condition=Q(tax_rate__gte=0)
            ),
            models.CheckConstraint(
                name="membership_type_admits_someone", condition=Q(admits__gte=1)
            ),
            models.CheckConstraint(
                name="membership_type_discount_at_most_100",
                condition=Q(event_discount_percent__lte=100),
            ),
        ]

    def __str__(self):
        return self.name
