"""What a group pays: a group rate per visitor category from a minimum size, and chaperone
rules (N free adults per M pupils of an age band, extra adults at a price)."""

from decimal import Decimal

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q

from orders.models import VisitorCategory


class GroupRate(models.Model):
    """A category's price per person in a group of at least `min_people` (the whole group's
    headcount); the rate with the largest minimum a group reaches applies, else the category's
    general price."""

    category = models.ForeignKey(
        VisitorCategory, on_delete=models.CASCADE, related_name="group_rates"
    )
    min_people = models.PositiveSmallIntegerField(
        "from a group of", validators=[MinValueValidator(1)]
    )
    price = models.DecimalField(
        "price per person", max_digits=8, decimal_places=2, validators=[MinValueValidator(0)]
    )

    class Meta:
        ordering = ["category", "min_people"]
        verbose_name = "group rate"
        constraints = [
            models.UniqueConstraint(
                fields=["category", "min_people"], name="one_group_rate_a_size"
            ),
            models.CheckConstraint(name="group_rate_not_negative", condition=Q(price__gte=0)),
            models.CheckConstraint(name="group_rate_from_one", condition=Q(min_people__gte=1)),
        ]

    def __str__(self):
        return f"{self.category.category} from {self.min_people}: {self.price}"


class ChaperoneRule(models.Model):
    """For the pupils of one age band (their visitor category): `free_adults` adults (of
    `adult_category`) go free for every `per_pupils` pupils or part of it; adults beyond pay
    `extra_price`, or their category's group price when it is empty. 1 per 10: 28 pupils bring
    3 adults free, a fourth and fifth pay."""

    name = models.CharField("age band", max_length=100, help_text="E.g. 'Primary school (6-10)'.")
    pupil_category = models.OneToOneField(
        VisitorCategory, on_delete=models.CASCADE, related_name="chaperone_rule"
    )
    adult_category = models.ForeignKey(
        VisitorCategory, on_delete=models.PROTECT, related_name="chaperoning_rules"
    )
    free_adults = models.PositiveSmallIntegerField(default=1)
    per_pupils = models.PositiveSmallIntegerField(
        "per pupils", default=10, validators=[MinValueValidator(1)]
    )
    extra_price = models.DecimalField(
        "price of an extra adult",
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
        help_text="Empty: the adult category's group price.",
    )

    class Meta:
        ordering = ["name"]
        verbose_name = "chaperone rule"
        constraints = [
            models.CheckConstraint(
                name="chaperone_per_pupils_positive", condition=Q(per_pupils__gte=1)
            ),
            models.CheckConstraint(
                name="chaperone_extra_not_negative",
                condition=Q(extra_price__isnull=True) | Q(extra_price__gte=0),
            ),
            models.CheckConstraint(
                name="chaperone_adults_not_pupils",
                condition=~Q(adult_category=models.F("pupil_category")),
            ),
        ]

    def __str__(self):
        return self.name

    def free_for(self, pupils: int) -> int:
        """How many adults go free with `pupils` pupils: `free_adults` per `per_pupils` or part."""
        return -(-pupils // self.per_pupils) * self.free_adults if pupils else 0
