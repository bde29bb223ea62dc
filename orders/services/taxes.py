"""Tax on what is sold: each line's net, tax and gross, computed once, here, when it is sold.

A line is one thing sold at one price: a ticket, a membership's period. Its tax rate (a percent)
is its catalogue entry's: a special event's for the event's tickets, the visitor category's for
general entry, the membership type's for a membership. MUSEUM_PRICES_INCLUDE_TAX says what a
catalogue price is:

- gross (the default, as consumer prices in Europe are): the line costs the price; its net is
  the price divided by (1 + rate), rounded half up to the cent; its tax is the rest;
- net: its tax is the price times the rate, rounded half up to the cent; the line costs both.

Rounded once, per line (museum.money.to_cent); an order's totals per rate are the sums of its
lines, never rounded again, so they always add up to what the order cost. The line keeps its
rate and tax (Ticket, MembershipSale): a later change of a rate changes no sale made.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

from museum.money import ZERO, to_cent
from orders.models import Channel


@dataclass(frozen=True)
class Taxed:
    """One line's amounts: `gross` is what it costs, `net` + `tax` == `gross`."""

    rate: Decimal
    net: Decimal
    tax: Decimal
    gross: Decimal


def taxed(*, price: Decimal, rate: Decimal) -> Taxed:
    """The line of catalogue price `price` at `rate` percent (the module's rule)."""
    if settings.MUSEUM_PRICES_INCLUDE_TAX:
        return split_gross(gross=price, rate=rate)
    net = to_cent(price)
    tax = to_cent(net * rate / 100)
    return Taxed(rate, net, tax, net + tax)


def split_gross(*, gross: Decimal, rate: Decimal) -> Taxed:
    """An amount that includes its tax at `rate` percent, split into net and tax: a gross
    catalogue price, and money paid back for part of a line, whatever MUSEUM_PRICES_INCLUDE_TAX
    says (what is paid back is always an amount paid, tax included)."""
    gross = to_cent(gross)
    net = to_cent(gross * 100 / (100 + rate))
    return Taxed(rate, net, gross - net, gross)


@dataclass(frozen=True)
class RateTotal:
    """What lines at one rate come to."""

    rate: Decimal
    net: Decimal
    tax: Decimal
    gross: Decimal


def totals_by_rate(lines: Iterable[tuple[Decimal, Decimal, Decimal]]) -> list[RateTotal]:
    """The sums of lines given as (rate, gross, tax), per rate, lowest rate first."""
    sums: dict[Decimal, list[Decimal]] = defaultdict(lambda: [ZERO, ZERO])
    for rate, gross, tax in lines:
        sums[rate][0] += gross
        sums[rate][1] += tax
    return [RateTotal(rate, gross - tax, tax, gross) for rate, (gross, tax) in sorted(sums.items())]


def order_taxes(order) -> list[RateTotal]:
    """The tax in what `order` costs (its `total`), per rate: the sums of its lines, those its
    total counts (a ticket cancelled while the order was held left the total then; one
    cancelled after it was confirmed, or with the order as it ended, is still in it). Its
    tickets as loaded (`sold_tickets`); a membership order's sales are read."""
    if order.sells_gift_cards:
        # A gift card is sold untaxed (a multi-purpose voucher): what it pays for is taxed.
        return totals_by_rate([(ZERO, order.total, ZERO)] if order.total else [])
    if order.sells_memberships:
        lines = list(order.membership_sales.all())
    else:
        cutoff = order.confirmed_at or order.cancelled_at
        lines = [
            ticket
            for ticket in order.sold_tickets
            if ticket.cancelled_at is None or (cutoff is not None and ticket.cancelled_at >= cutoff)
        ]
    # Its donations, at 0 %: all of them (one is refunded only once paid, and stays in it);
    # its fees (a group's tour) but those taken off it.
    return taxes_of([*lines, *donations_of(order), *fees_of(order)])


def fees_of(order) -> list:
    """The order's fees in its total (none taken off), kept on it (`sold_fees`) once read. Only
    a group's order (Channel.INVOICE) has any: others read nothing."""
    if order.channel != Channel.INVOICE:
        return []
    kept = getattr(order, "sold_fees", None)
    if kept is None:
        kept = order.sold_fees = list(order.fees.filter(cancelled_at__isnull=True))
    return kept


def donations_of(order) -> list:
    """The order's donations as its sale or selector kept them (`sold_donations`), else read."""
    kept = getattr(order, "sold_donations", None)
    if kept is None:
        # Read once, with their funds (the order's answer names them), and kept on it.
        kept = order.sold_donations = list(order.donations.select_related("fund"))
    return kept


def taxes_of(lines: Iterable) -> list[RateTotal]:
    """totals_by_rate of lines sold (tickets, membership sales), each at its kept rate and tax."""
    return totals_by_rate((line.tax_rate, line.price, line.tax) for line in lines)


def of_gross(*, gross: Decimal, rate: Decimal) -> Taxed:
    """A gross amount at `rate` split as the module splits a gross price (net rounded half up
    to the cent, the tax the rest), whatever MUSEUM_PRICES_INCLUDE_TAX says: what a partial
    refund of a line gives back is money paid, gross (orders.services.receipts)."""
    net = to_cent(gross * 100 / (100 + rate))
    return Taxed(rate, net, gross - net, gross)
