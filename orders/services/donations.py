"""Donations: the rules of a gift to one of the museum's funds, in one place, whichever face
takes it (an order's `donations` beside its tickets, a donation-only order through the API, the
visitor's page or the desk), and the one way one goes back (staff refund it).

A donation is a line of its order, untaxed (its rate 0 %: orders.models.Donation reads as a line
at 0 %, so the order's taxes, receipts, credit notes and reports sum it as they sum tickets): it
counts in the order's `total`, is paid with it, and is given once the order is confirmed. A
visitor's cancellation pays back the tickets only; a donation goes back only when staff refund
it, through the payments that took it, with a credit note (orders.services.payments)."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.services import record_each
from museum import i18n
from museum.exceptions import InvalidInput, NotAllowed, NotFound
from museum.money import ZERO
from orders.exceptions import DonationGiven, DonationRefunded, NothingToPay
from orders.models import Donation, Fund, Order, OrderKind, OrderStatus, RefundSource
from orders.selectors import CANCEL_ANY_ORDER, order_to_change
from orders.services.new_orders import new_order, record_new, settle_new, stays_held
from orders.services.payments import refund_donations

# An order's gifts: enough for a museum's handful of funds, few enough to keep an order small.
MAX_DONATION_LINES = 5


@dataclass(frozen=True)
class Gift:
    """One donation line, checked: to an active `fund`, an `amount` within its bounds."""

    fund: Fund
    amount: Decimal


def checked_gifts(lines: Sequence[dict], *, field: str = "donations") -> list[Gift]:
    """The donation lines (`fund`: a fund's id, `amount`), checked before any row is locked:
    at most MAX_DONATION_LINES, each to an active fund, in cents, within the fund's minimum and
    maximum. InvalidInput names the line's field (`donations.0.amount`)."""
    if len(lines) > MAX_DONATION_LINES:
        message = _("At most %(limit)s donations per order.") % {"limit": MAX_DONATION_LINES}
        raise InvalidInput(field, message)
    wanted = {line["fund"] for line in lines}
    funds = {fund.pk: fund for fund in Fund.objects.filter(pk__in=wanted, active=True)}
    gifts = []
    for index, line in enumerate(lines):
        fund = funds.get(line["fund"])
        if fund is None:
            raise InvalidInput(f"{field}.{index}.fund", _("No such fund takes donations."))
        amount = Decimal(line["amount"])
        if amount != amount.quantize(Decimal("0.01")):
            raise InvalidInput(f"{field}.{index}.amount", _("At most 2 decimal places."))
        if not fund.minimum <= amount <= fund.maximum:
            words = {"low": fund.minimum, "high": fund.maximum}
            message = _("A donation to this fund is %(low)s to %(high)s.") % words
            raise InvalidInput(f"{field}.{index}.amount", message)
        gifts.append(Gift(fund, amount.quantize(Decimal("0.01"))))
    return gifts


def total_of_gifts(gifts: Sequence[Gift]) -> Decimal:
    return sum((gift.amount for gift in gifts), ZERO)


def record_gifts(order: Order, gifts: Sequence[Gift]) -> list[Donation]:
    """The order's donations written (in the sale's transaction), kept on it as
    `sold_donations` for its answer and its receipt."""
    made = Donation.objects.bulk_create(
        [Donation(order=order, fund=gift.fund, amount=gift.amount) for gift in gifts]
    )
    order.sold_donations = made
    return made


def active_funds():
    """The funds offered now, in their order."""
    return Fund.objects.filter(active=True)


def give(
    *, buyer, email: str, donations: Sequence[dict], language: str = "", name: str = "", seller=None
) -> Order:
    """A donation-only order (OrderKind.DONATION: no tickets, no places): held until paid
    online, as other orders, or confirmed at once on a partner's account; its receipt issued
    when it is confirmed. `seller`: staff at the desk, who take its payment next."""
    gifts = checked_gifts(donations)
    if not gifts:
        raise InvalidInput("donations", _("Give to at least one fund."))
    language = i18n.offered(language) or i18n.current()
    with transaction.atomic():
        order = new_order(
            buyer=buyer,
            email=email,
            language=language,
            kind=OrderKind.DONATION,
            day=timezone.localdate(),
            total=total_of_gifts(gifts),
            name=name,
        )
        order.save(force_insert=True)
        order.sold_tickets = []
        order.refunded = ZERO
        record_gifts(order, gifts)
        held = stays_held(order)
        settle_new(order, held=held, saved=True)
        changes = {
            "status": order.status,
            "total": order.total,
            "donations": [d.pk for d in order.sold_donations],
        }
        record_new(order, by=seller or buyer, held=held, changes=changes)
    return order


def refund_donation(*, order_id: uuid.UUID, donation_id: int, by) -> Order:
    """Staff give a donation of a confirmed order back, whole: through the payments that took
    it (a refund each, never more than a payment has left), a credit note issued, the donation
    marked refunded; its order stays as it is (its tickets, its total). Others: NotFound for an
    order they may not see, NotAllowed for their own."""
    with transaction.atomic():
        order = order_to_change(order_id=order_id, by=by)
        if not by.has_perm(CANCEL_ANY_ORDER):
            raise NotAllowed(_("Only the museum's staff refund a donation."))
        donation = (
            Donation.objects.select_for_update()
            .select_related("fund")
            .filter(pk=donation_id, order=order)
            .first()
        )
        if donation is None:
            raise NotFound()
        if donation.cancelled_at is not None:
            raise DonationRefunded()
        if order.confirmed_at is None:
            raise NothingToPay()  # never paid: nothing to give back
        donation.cancelled_at = timezone.now()
        donation.save(update_fields=["cancelled_at"])
        _refunds, entry = refund_donations(
            order=order, donations=[donation], source=RefundSource.STAFF, by=by
        )
        record_each(entries=[entry], by=by)
    return order


def refuse_unless_held(order: Order) -> bool:
    """Whether cancelling a donation-only order lets its hold go (True) or is refused: once
    paid, a donation is given (DonationGiven), and only staff refund it."""
    if order.status == OrderStatus.HELD:
        return True
    raise DonationGiven()
