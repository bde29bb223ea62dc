"""Memberships made directly, as the tests of member visits and the door need them: buying one is
tested with its own sale (orders.services.memberships)."""

import datetime as dt

from django.utils import timezone

from orders.codes import new_confirmation_code
from orders.models import Membership, MembershipStatus, MembershipType
from tests.factories import UserFactory


def membership_type(*, code: str = "dual", admits: int = 2, discount: int = 0) -> MembershipType:
    found, _ = MembershipType.objects.get_or_create(
        code=code,
        defaults={
            "name": code.title(),
            "price": 80,
            "admits": admits,
            "event_discount_percent": discount,
        },
    )
    return found


def membership(
    *,
    buyer=None,
    admits: int = 2,
    discount: int = 0,
    status: str = MembershipStatus.ACTIVE,
    valid_from: dt.date | None = None,
    valid_until: dt.date | None = None,
    holder_name: str = "Ada Lovelace",
) -> Membership:
    """An active membership from `valid_from` (default today) for a year, bought by `buyer`
    (default: a new account)."""
    valid_from = valid_from or timezone.localdate()
    return Membership.objects.create(
        membership_type=membership_type(
            code=f"t{admits}-{discount}", admits=admits, discount=discount
        ),
        buyer=buyer or UserFactory(),
        holder_name=holder_name,
        email="ada@example.com",
        status=status,
        valid_from=valid_from,
        valid_until=valid_until or valid_from + dt.timedelta(days=364),
        card_code=new_confirmation_code("member"),
    )
