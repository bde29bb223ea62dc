"""OCTO's `octo/offers` capability: a reseller's `offerCode` is a voucher's code, sold through the
OCTO channel (docs/octo.md, "Offers"). Whether the voucher reduces a ticket is the sale's one
question (orders.services.vouchers.refusal) and the price it makes the sale's own
(orders.services.pricing.priced); a booking takes it through place_order like any sale. This
module only says them in OCTO's words."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.utils.translation import gettext as _

from museum.exceptions import MuseumProblem
from octo import catalogue
from octo.exceptions import Unprocessable
from orders.exceptions import IsGiftCard, VoucherBudgetSpent, VoucherNotApplicable, VoucherUsedUp
from orders.models import Voucher, VoucherChannel
from orders.services import vouchers
from orders.services.pricing import Line, priced


def code_of(offer_code: str | None) -> str:
    """An offer code as a booking keeps it (as vouchers read codes); empty: none."""
    return vouchers.normalized(offer_code or "")


@contextmanager
def refusals(offer_code: str) -> Iterator[None]:
    """The sale's refusals of the voucher as OCTO says them: UNPROCESSABLE_ENTITY naming the
    `offerCode`. An unknown code and one out of scope read alike (so partners cannot probe
    codes); one used up or out of budget says so, as the sale tells any buyer."""
    try:
        yield
    except (VoucherNotApplicable, IsGiftCard):
        raise Unprocessable(
            _("The offerCode does not apply to this booking."), offerCode=offer_code
        ) from None
    except (VoucherUsedUp, VoucherBudgetSpent) as problem:
        raise Unprocessable(
            _("The offerCode does not apply to this booking: %(reason)s")
            % {"reason": problem.detail},
            offerCode=offer_code,
        ) from None


def voucher_named(offer_code: str) -> Voucher | None:
    """The voucher of the code; None for none (an unknown code, or a gift card's)."""
    if not offer_code:
        return None
    try:
        return vouchers.find(offer_code)
    except MuseumProblem:
        return None


def unit_lines(
    item: catalogue.Product, slot: catalogue.Slot, voucher: Voucher | None
) -> list[Line]:
    """Each unit's one ticket on `slot` as the sale would price it through OCTO with `voucher`
    (where it reduces that unit's ticket), in the units' order."""
    categories = [category for category, _unit in catalogue.units()]
    visit = vouchers.Visit(item.ticket_type, slot.date, item.event_id, slot.entry_time)
    named = [
        voucher
        if voucher is not None
        and vouchers.refusal(
            voucher, visit=visit, channel=VoucherChannel.OCTO, category_id=category.pk
        )
        is None
        else None
        for category in categories
    ]
    return priced(
        lines=[{"category": category.category, "quantity": 1} for category in categories],
        categories=categories,
        event=item.event,
        vouchers=named,
    )


def applies(lines: list[Line]) -> bool:
    """Whether the voucher reduced any of the lines."""
    return any(line.voucher is not None for line in lines)


def offer_out(voucher: Voucher | None, offer_code: str) -> dict:
    """OCTO's offer object of a voucher (octo-types `Offer`): its title the voucher's tag, else
    its code. The partner's net follows its retail by the commission: PRORATED."""
    unit_ids = [] if voucher is None else voucher.categories.values_list("category", flat=True)
    return {
        "title": title_of(voucher, offer_code),
        "code": offer_code,
        "description": None,
        "netDiscount": "PRORATED",
        "restrictions": {
            "minUnits": None,
            "maxUnits": None,
            "minTotal": None,
            "maxTotal": None,
            # Empty: every unit, as the voucher's own empty scope means every category.
            "unitIds": sorted(unit_ids),
        },
        "usable": True,
    }


def title_of(voucher: Voucher | None, offer_code: str) -> str:
    return (voucher.tag if voucher is not None else "") or offer_code


def fields(offer: dict | None) -> dict:
    """The fields `octo/offers` adds to a booking or an availability: the offer applied (an
    offer_out, or None), never a combination, no comparisons (the museum sells no upgrades)."""
    return {
        "offerCode": offer["code"] if offer else None,
        "offerTitle": offer["title"] if offer else None,
        "offerComparisons": [],
        "offerIsCombination": False,
        "offers": [offer] if offer else [],
        "offer": offer,
    }


@dataclass(frozen=True)
class Asked:
    """An offer code a request names under `octo/offers` (empty: none), its voucher (None if
    there is none) and its OCTO offer, read once for every availability answered."""

    code: str
    voucher: Voucher | None
    offer: dict | None


def asked(offer_code: str | None) -> Asked:
    code = code_of(offer_code)
    voucher = voucher_named(code)
    return Asked(code, voucher, offer_out(voucher, code) if code else None)
