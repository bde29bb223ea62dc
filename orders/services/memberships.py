"""Memberships: what a membership is worth on a date, and finding one by what a member shows.

A membership admits from `valid_from` to `valid_until`, both included, while it is active. One
that lapsed reads `expired` whether or not the sweep that marks it has run yet (status_on).
"""

import uuid
from datetime import date

from django.utils import timezone

from orders.codes import read_code
from orders.exceptions import MembershipNotValid, UnknownMembership
from orders.models import Membership, MembershipStatus


def status_on(membership: Membership, day: date | None = None) -> str:
    """Its status as a member and the API read it on `day` (default the museum's today): an
    active membership whose last day has passed is expired."""
    day = day or timezone.localdate()
    if (
        membership.status == MembershipStatus.ACTIVE
        and membership.valid_until is not None
        and membership.valid_until < day
    ):
        return MembershipStatus.EXPIRED
    return membership.status


def is_valid_on(membership: Membership, day: date) -> bool:
    return (
        membership.status == MembershipStatus.ACTIVE
        and membership.valid_from is not None
        and membership.valid_until is not None
        and membership.valid_from <= day <= membership.valid_until
    )


def refuse_unless_valid(membership: Membership, day: date) -> None:
    """MembershipNotValid, with its `validUntil`, unless it admits on `day`."""
    if not is_valid_on(membership, day):
        valid_until = membership.valid_until.isoformat() if membership.valid_until else None
        raise MembershipNotValid(validUntil=valid_until)


def membership_for(reference: str) -> Membership:
    """The membership a visitor names: by its id, or by its card code read forgivingly (as the
    desk and the door read codes); UnknownMembership otherwise."""
    text = reference.strip()
    try:
        return Membership.objects.select_related("membership_type").get(pk=uuid.UUID(text))
    except (ValueError, Membership.DoesNotExist):
        pass
    typed = read_code(text)
    found = None
    if typed is not None and typed.member_code:
        found = (
            Membership.objects.select_related("membership_type")
            .filter(card_code=typed.member_code)
            .first()
        )
    if found is None:
        raise UnknownMembership()
    return found
