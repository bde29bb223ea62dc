"""The periods memberships are valid: when a period sold starts and ends, and what a confirmed
order's membership sales do to their memberships. Below orders.services.payments, whose order
confirmation starts them (mark_confirmed), however the order was confirmed: at once (free, on
account), by a provider's payment or at the desk.

A new membership's period starts on its order's date; a renewal's the day after the membership
ends when it is renewed before it ends or within MUSEUM_MEMBERSHIP_GRACE_DAYS after (so a member
who renews late loses no days and gains none), else on the day it is paid; a gift's when it is
redeemed (orders.services.memberships.redeem_gift).
"""

import calendar
from datetime import date, datetime, timedelta

from django.conf import settings
from django.utils import timezone

from audit.models import Action
from audit.services import record
from orders.exceptions import MembershipNotValid
from orders.models import (
    Membership,
    MembershipSale,
    MembershipSaleKind,
    MembershipStatus,
    Order,
    Validity,
)


def refuse_unless_valid(membership: Membership, day: date) -> None:
    """MembershipNotValid, with its `validUntil` and why (`validity`: Membership.validity_on),
    unless it admits on `day`."""
    reason = membership.validity_on(day)
    if reason != Validity.VALID:
        valid_until = membership.valid_until.isoformat() if membership.valid_until else None
        raise MembershipNotValid(validUntil=valid_until, validity=reason)


def period_end(start: date, months: int) -> date:
    """The last day of a period of `months` from `start`, included: the day before the same day
    `months` later (1 March for 12 months ends on the last day of February), or, where that
    month is shorter, the day before its last (31 January for a month ends on 27 or 28
    February)."""
    year, month = divmod(start.month - 1 + months, 12)
    year, month = start.year + year, month + 1
    day = min(start.day, calendar.monthrange(year, month)[1])
    return date(year, month, day) - timedelta(days=1)


def next_period_start(membership: Membership, *, day: date) -> date:
    """Where a renewal of the membership, paid on `day`, starts: the day after it ends, if that
    is no more than MUSEUM_MEMBERSHIP_GRACE_DAYS before `day`; else `day`."""
    if membership.valid_until is None:
        return day
    following = membership.valid_until + timedelta(days=1)
    if day <= membership.valid_until + timedelta(days=settings.MUSEUM_MEMBERSHIP_GRACE_DAYS):
        return following
    return day


def start_periods(order: Order, *, now: datetime) -> None:
    """The confirmed order's membership sales start their periods (a gift's waits for its
    redemption): each membership, locked after the order as every change of an order locks
    them, is active from then on. Audited, which tells the webhooks (membership.activated,
    membership.renewed); the order's confirmation email tells the buyer."""
    sales = list(
        MembershipSale.objects.filter(order=order, cancelled_at__isnull=True, valid_from=None)
        .exclude(kind=MembershipSaleKind.GIFT)
        .select_related("membership__membership_type")
    )
    for sale in sales:
        membership = Membership.objects.select_for_update().get(pk=sale.membership_id)
        months = sale.membership.membership_type.validity_months
        if sale.kind == MembershipSaleKind.RENEWAL:
            _renewed(membership, sale, months=months, day=timezone.localdate(now))
        else:
            _activated(membership, sale, start=order.date, months=months, now=now)
        sale.save(update_fields=["valid_from", "valid_until"])


def activate(membership: Membership, sale: MembershipSale, *, start: date, now: datetime) -> None:
    """The locked membership's first period, `sale`'s, starts on `start`: a new one once paid,
    a gift once redeemed (the caller saves the sale)."""
    months = membership.membership_type.validity_months
    _activated(membership, sale, start=start, months=months, now=now)


def _activated(
    membership: Membership, sale: MembershipSale, *, start: date, months: int, now: datetime
) -> None:
    sale.valid_from, sale.valid_until = start, period_end(start, months)
    before = membership.status
    membership.status = MembershipStatus.ACTIVE
    membership.valid_from, membership.valid_until = sale.valid_from, sale.valid_until
    membership.activated_at = now
    membership.save(update_fields=["status", "valid_from", "valid_until", "activated_at"])
    changes = {
        "status": [before, membership.status],
        "valid_from": membership.valid_from,
        "valid_until": membership.valid_until,
    }
    record(action=Action.CONFIRMED, obj=membership, changes=changes)


def _renewed(membership: Membership, sale: MembershipSale, *, months: int, day: date) -> None:
    """The renewal's period follows the membership's (or, renewed after the grace period,
    starts on `day`); its reminders are due again for the new last day."""
    start = next_period_start(membership, day=day)
    sale.valid_from, sale.valid_until = start, period_end(start, months)
    before = {"status": membership.status, "valid_until": membership.valid_until}
    if membership.valid_until is None or start > membership.valid_until + timedelta(days=1):
        membership.valid_from = start  # a gap: the new period stands alone
    membership.valid_until = sale.valid_until
    membership.status = MembershipStatus.ACTIVE
    membership.reminded_30_at = membership.reminded_7_at = None
    membership.save(
        update_fields=["status", "valid_from", "valid_until", "reminded_30_at", "reminded_7_at"]
    )
    changes = {
        "renewed": True,
        "status": [before["status"], membership.status],
        "valid_from": membership.valid_from,
        "valid_until": [before["valid_until"], membership.valid_until],
    }
    record(action=Action.CHANGED, obj=membership, changes=changes)
