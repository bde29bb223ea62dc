"""What a visitor pays: the visitor categories and their prices, the one price source of a sale.

A general-entry ticket's catalogue price is its category's `general_price`; an event ticket's its
category's share of the event's price, rounded half up to the cent (45.00 at 50 % is 22.50, 9.99
at 50 % is 5.00). What the visitor pays is that price with its tax (orders.services.taxes: the
price itself where prices include tax, the default); an order's total is the sum of its
tickets' prices. The contract's purchase sells the default
category (DEFAULT_CATEGORY), so its price is that category's.

A member visit's member lines (MEMBER_CATEGORY, no visitor category) cost nothing; the other
lines of an order that names a membership cost what they always do, less the membership type's
event discount on a special event (applied to the event's share, then rounded).
"""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from events.models import SpecialEvent
from museum.exceptions import InvalidInput
from museum.kept import Kept
from museum.money import ZERO, to_cent
from orders.exceptions import DateInPast, EventNotOnDate, NeedsCompanion, UnknownEvent
from orders.models import MEMBER_CATEGORY, VisitorCategory, Voucher
from orders.services.taxes import Taxed, taxed
from orders.services.vouchers import voucher_price

# The contract's POST /tickets sells this category.
DEFAULT_CATEGORY = "adult"


@dataclass(frozen=True)
class Line:
    """`quantity` tickets of one visitor category, each at `taxed.gross` with `taxed.tax` in
    it; no category: members' free places."""

    category: VisitorCategory | None
    quantity: int
    taxed: Taxed
    # The voucher that made its price, each of its tickets one use, each `discount` less than
    # it would have cost without (orders.services.vouchers).
    voucher: Voucher | None = None
    discount: Decimal = ZERO

    @property
    def price(self) -> Decimal:
        return self.taxed.gross

    @property
    def member(self) -> bool:
        return self.category is None

    @property
    def code(self) -> str:
        """What the order's line called it."""
        return MEMBER_CATEGORY if self.category is None else self.category.category


def active_categories() -> QuerySet[VisitorCategory]:
    return VisitorCategory.objects.filter(active=True)


# What every sale prices with, kept in each process until staff change a category
# (orders/apps.py connects the change).
ON_SALE: Kept[dict[str, VisitorCategory]] = Kept(
    "visitor-categories", lambda: {c.category: c for c in active_categories()}
)


def category_price(
    *, category: VisitorCategory, event: SpecialEvent | None, discount_percent: int = 0
) -> Decimal:
    """What a visitor of `category` pays, tax included."""
    return ticket_taxed(category=category, event=event, discount_percent=discount_percent).gross


def ticket_taxed(
    *, category: VisitorCategory, event: SpecialEvent | None, discount_percent: int = 0
) -> Taxed:
    """A ticket's amounts: of the general price at the category's tax rate, or of the
    category's share of the event's price, less `discount_percent` (a member order's event
    discount), at the event's."""
    return taxed(
        price=catalogue_price(category=category, event=event, discount_percent=discount_percent),
        rate=rate_of(category=category, event=event),
    )


def catalogue_price(
    *, category: VisitorCategory, event: SpecialEvent | None, discount_percent: int = 0
) -> Decimal:
    """A ticket's price as the catalogue states it (gross or net: orders.services.taxes)."""
    if event is None:
        return category.general_price
    share = event.price * category.event_price_percent / 100
    if discount_percent:
        share = share * (100 - discount_percent) / 100
    return to_cent(share)


def rate_of(*, category: VisitorCategory, event: SpecialEvent | None) -> Decimal:
    return category.tax_rate if event is None else event.tax_rate


def event_on(*, ticket_date: date, event_id: uuid.UUID | None) -> SpecialEvent:
    """The event on programme that runs on `ticket_date`: UnknownEvent or EventNotOnDate."""
    event = SpecialEvent.objects.active().filter(pk=event_id).first()
    if event is None:
        raise UnknownEvent()
    if not event.dates.filter(date=ticket_date).exists():
        raise EventNotOnDate()
    return event


def price_list(
    *, ticket_date: date, event_id: uuid.UUID | None = None
) -> list[tuple[VisitorCategory, Decimal]]:
    """What each visitor category on sale pays for a visit on `ticket_date` (general entry, or
    the event `event_id`), as a sale prices it."""
    if ticket_date < timezone.localdate():
        raise DateInPast()
    event = None if event_id is None else event_on(ticket_date=ticket_date, event_id=event_id)
    return [
        (category, category_price(category=category, event=event))
        for category in ON_SALE.get().values()
    ]


def categories_of(lines: Sequence[dict]) -> list[VisitorCategory | None]:
    """Each line's category, on sale (None for a member line); InvalidInput naming the first
    line whose is not, or the lines if every one needs a companion of another category."""
    codes = [line["category"] for line in lines]
    on_sale = ON_SALE.get()
    for index, code in enumerate(codes):
        if code != MEMBER_CATEGORY and code not in on_sale:
            raise InvalidInput(f"lines.{index}.category", _("No such visitor category on sale."))
    categories = [None if code == MEMBER_CATEGORY else on_sale[code] for code in codes]
    # Infants, say, come with someone who is not one (a member is someone).
    if all(category is not None and category.needs_companion for category in categories):
        raise NeedsCompanion(sorted({c.name for c in categories if c is not None}))
    return categories


def priced(
    *,
    lines: Sequence[dict],
    categories: Sequence[VisitorCategory | None],
    event: SpecialEvent | None,
    discount_percent: int = 0,
    discounted: int | None = None,
    vouchers: Sequence[Voucher | None] = (),
) -> list[Line]:
    """The lines priced: members' free, the others at their category's price (less
    `discount_percent` on an event, for the first `discounted` tickets in the lines' order, all
    if None; a pay-what-you-want category's general entry at the line's `price`, at least its
    own), or at what each line's voucher in `vouchers` makes it. A line the discount runs out in
    is two: its tickets discounted, then the others at the full price."""
    left = discounted
    vouchers = vouchers or [None] * len(lines)
    priced_lines = []
    for index, (line, category, voucher) in enumerate(
        zip(lines, categories, vouchers, strict=True)
    ):
        quantity = line["quantity"]
        if category is None:
            rate = ZERO if event is None else event.tax_rate
            priced_lines.append(Line(None, quantity, taxed(price=ZERO, rate=rate)))
            continue
        full = _named_price(line, category=category, event=event, index=index)
        less = quantity if left is None or not discount_percent else min(quantity, left)
        if less or quantity == less:
            member_price = (
                full
                if event is None
                else catalogue_price(
                    category=category, event=event, discount_percent=discount_percent
                )
            )
            priced_lines.append(
                _line(category, less, event=event, full=full, member=member_price, voucher=voucher)
            )
        if quantity > less:
            priced_lines.append(
                _line(
                    category, quantity - less, event=event, full=full, member=full, voucher=voucher
                )
            )
        if left is not None and discount_percent:
            left -= less
    return priced_lines


def _named_price(
    line: dict, *, category: VisitorCategory, event: SpecialEvent | None, index: int
) -> Decimal:
    """The line's catalogue price: what its buyer names for a pay-what-you-want category's
    general entry (at least its general price; that price if none is named)."""
    named = line.get("price")
    if event is not None or not category.pay_what_you_want:
        if named is not None:
            raise InvalidInput(
                f"lines.{index}.price", _("Only a pay-what-you-want category takes a price.")
            )
        return catalogue_price(category=category, event=event)
    if named is None:
        return category.general_price
    if named < category.general_price:
        raise InvalidInput(
            f"lines.{index}.price",
            _("At least %(minimum)s.") % {"minimum": category.general_price},
        )
    return to_cent(named)


def _line(
    category: VisitorCategory,
    quantity: int,
    *,
    event: SpecialEvent | None,
    full: Decimal,
    member: Decimal,
    voucher: Voucher | None,
) -> Line:
    """`quantity` tickets of `category` whose catalogue price is `full`, `member` with a
    member's discount: with `voucher`, at its price where that is lower (of the member's price
    where it stacks, else the better of the two), each one of its uses. A voucher that keeps
    places is used for them even where it is no cheaper (a waiting list's offer takes nothing
    off): its uses count, so its holder buys its places once, and they are kept no longer."""
    rate = rate_of(category=category, event=event)
    if voucher is not None:
        before = member if voucher.stacks else full
        with_voucher = voucher_price(voucher, before)
        if with_voucher < member:
            amounts = taxed(price=with_voucher, rate=rate)
            discount = taxed(price=before, rate=rate).gross - amounts.gross
            return Line(category, quantity, amounts, voucher=voucher, discount=discount)
        if voucher.keeps_places:
            return Line(category, quantity, taxed(price=member, rate=rate), voucher=voucher)
    return Line(category, quantity, taxed(price=member, rate=rate))


def total_of(lines: Sequence[Line]) -> Decimal:
    return sum((line.price * line.quantity for line in lines), Decimal("0"))
