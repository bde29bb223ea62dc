"""What a group pays, the one price source of groups: every request, change and the door's
count read it. Per visitor category, the group rate of the largest minimum the group reaches
(GroupRate), else the category's general price; chaperones by their age band's rule (N adults
free per M pupils or part, extra adults at the rule's price or their group price); a guided
tour's fee, per tour or per guide, at its own tax rate."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from django.utils.translation import gettext as _

from groups.models import ChaperoneRule, GroupRate, TourProgramme
from museum import i18n
from museum.money import ZERO
from museum.text import one_line
from orders.models import VisitorCategory
from orders.services.taxes import Taxed, taxed


@dataclass(frozen=True)
class Unit:
    """One person's admission: their category and price (0 for a free chaperone)."""

    category: VisitorCategory
    taxed: Taxed
    free_chaperone: bool = False

    @property
    def price(self) -> Decimal:
        return self.taxed.gross


@dataclass(frozen=True)
class TourFee:
    description: str
    taxed: Taxed


@dataclass(frozen=True)
class GroupPrice:
    """Every person's admission (`units`, by category in the categories' order, free ones first
    within a category) and the tour's fee; `total` their sum."""

    units: list[Unit] = field(default_factory=list)
    fees: list[TourFee] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return sum((u.price for u in self.units), ZERO) + sum(
            (f.taxed.gross for f in self.fees), ZERO
        )

    def units_of(self, category: VisitorCategory) -> list[Unit]:
        return [unit for unit in self.units if unit.category.pk == category.pk]

    def free_chaperones(self) -> int:
        return sum(1 for unit in self.units if unit.free_chaperone)


def estimate(group) -> Decimal | None:
    """What a request waiting for an answer would cost as it stands (its lines, as loaded, and
    its tour): the price approval would invoice; None once it has its order (its total)."""
    if group.order_id is not None:
        return None
    counts = {line.category: line.quantity for line in group.lines.all()}
    return price_group(counts, tour=group.tour, language=group.language).total if counts else None


def group_price_of(category: VisitorCategory, *, size: int, rates: Mapping[int, list]) -> Decimal:
    """A category's price per person in a group of `size` (`rates`: the categories' rates,
    (min_people, price) by category key, largest minimum first)."""
    for min_people, price in rates.get(category.pk, ()):
        if size >= min_people:
            return price
    return category.general_price


def price_group(
    counts: Mapping[VisitorCategory, int], *, tour: TourProgramme | None, language: str = ""
) -> GroupPrice:
    """What a group of `counts` (people per category) pays, with `tour` if it books one; the
    fee's description in `language` (the group's)."""
    size = sum(counts.values())
    categories = sorted(counts, key=lambda c: (c.ordering, c.category))
    rates: dict[int, list] = {}
    for row in GroupRate.objects.filter(category__in=categories).order_by("-min_people"):
        rates.setdefault(row.category_id, []).append((row.min_people, row.price))
    free = _free_chaperones(counts)
    units: list[Unit] = []
    for category in categories:
        n = counts[category]
        if not n:
            continue
        frees, extra_price = free.get(category.pk, (0, None))
        frees = min(frees, n)
        price = group_price_of(category, size=size, rates=rates)
        paid_price = price if extra_price is None else extra_price
        units += [Unit(category, taxed(price=ZERO, rate=category.tax_rate), True)] * frees
        units += [Unit(category, taxed(price=paid_price, rate=category.tax_rate))] * (n - frees)
    fees = []
    if tour is not None and tour.fee_for(size) > 0:
        with i18n.speaking(language or i18n.museum_language_code()):
            words = _("Guided tour: %(tour)s") % {"tour": one_line(tour.name)}
        fees.append(TourFee(words, taxed(price=tour.fee_for(size), rate=tour.tax_rate)))
    return GroupPrice(units, fees)


def _free_chaperones(
    counts: Mapping[VisitorCategory, int],
) -> dict[int, tuple[int, Decimal | None]]:
    """Per adult category: how many go free with the group's pupils (every age band's rule
    added up) and the price of an extra adult (the first rule's that names one)."""
    by_key = {category.pk: n for category, n in counts.items()}
    free: dict[int, tuple[int, Decimal | None]] = {}
    rules = ChaperoneRule.objects.filter(pupil_category__in=list(by_key)).order_by("pk")
    for rule in rules:
        pupils = by_key.get(rule.pupil_category_id, 0)
        frees, extra = free.get(rule.adult_category_id, (0, None))
        free[rule.adult_category_id] = (
            frees + rule.free_for(pupils),
            extra if extra is not None else rule.extra_price,
        )
    return free
