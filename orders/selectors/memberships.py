"""Reads of memberships: who may see one, its card and gift card, the desk's search, a
member's recent visits."""

import uuid
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Count, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.codes import read_code
from orders.exceptions import NoGiftCard, NoMembershipCard, UnknownMembership
from orders.models import (
    MemberEntry,
    Membership,
    MembershipSale,
    MembershipSaleKind,
    MembershipStatus,
    Order,
    OrderStatus,
)

VIEW_ANY_MEMBERSHIP = "orders.view_membership"


def viewable_memberships(
    *,
    viewer,
    status: str | None = None,
    type_code: str | None = None,
    expiring_before: date | None = None,
    search: str | None = None,
) -> QuerySet[Membership]:
    """The viewer's own memberships and the gifts it gave (staff who may view any membership:
    all), newest first; of a `status` as status_on reads it (a lapsed one is expired, not
    active), a type, ending on or before a date, or whose holder's name, email or card code
    contains `search` (only among its own: a gift's giver never learns its holder's)."""
    found = Membership.objects.select_related("membership_type").prefetch_related("sales")
    sees_all = viewer.has_perm(VIEW_ANY_MEMBERSHIP)
    if not sees_all:
        gave = MembershipSale.objects.filter(kind=MembershipSaleKind.GIFT, order__buyer=viewer)
        found = found.filter(Q(buyer=viewer) | Q(pk__in=gave.values("membership_id")))
    today = timezone.localdate()
    lapsed = Q(status=MembershipStatus.ACTIVE, valid_until__lt=today)
    if status == MembershipStatus.EXPIRED:
        found = found.filter(Q(status=MembershipStatus.EXPIRED) | lapsed)
    elif status == MembershipStatus.ACTIVE:
        found = found.filter(status=MembershipStatus.ACTIVE).exclude(lapsed)
    elif status:
        found = found.filter(status=status)
    if type_code:
        found = found.filter(membership_type__code=type_code)
    if expiring_before:
        found = found.filter(valid_until__lte=expiring_before)
    if search:
        text = search.strip()
        holders = (
            Q(holder_name__icontains=text) | Q(email__icontains=text) | Q(card_code__icontains=text)
        )
        found = found.filter(holders if sees_all else holders & Q(buyer=viewer))
    return found.order_by("-created_at", "pk")


def viewable_membership(*, membership_id: uuid.UUID, viewer) -> Membership:
    """A membership for its owner, a gift's giver (whose answer leaves out the holder's data once
    another account redeemed it: may_see_holder) and staff; UnknownMembership (404) for anyone
    else."""
    membership = viewable_memberships(viewer=viewer).filter(pk=membership_id).first()
    if membership is None:
        raise UnknownMembership()
    return membership


def owned_membership(*, membership_id: uuid.UUID, viewer) -> Membership:
    """A membership for its owner and staff, to act on or print its card; UnknownMembership
    (404) for anyone else, a redeemed gift's giver too."""
    membership = viewable_membership(membership_id=membership_id, viewer=viewer)
    if not may_see_holder(viewer=viewer, membership=membership):
        raise UnknownMembership()
    return membership


def may_see_holder(*, viewer, membership: Membership) -> bool:
    """Whether `viewer` sees the holder's data (name, email, card): the membership's owner (its
    buyer, or for a gift the account that redeemed it) and staff. A gift's giver, once another
    account redeemed it, sees that it was redeemed, not by whom."""
    return viewer.pk == membership.buyer_id or viewer.has_perm(VIEW_ANY_MEMBERSHIP)


def may_see_gift_code(*, viewer, membership: Membership) -> bool:
    """A gift's code is shown to its buyer and staff only: whoever has it may redeem it."""
    return membership.gift_code is not None and (
        viewer.pk == membership.buyer_id or viewer.has_perm(VIEW_ANY_MEMBERSHIP)
    )


def refuse_unless_card_printable(membership: Membership) -> None:
    """Whether the membership's card may be printed, drawn or sent, for every face that does (the
    API's PNG and PDF, the desk's print, the activation email): not while it is pending (not
    paid, or a gift not redeemed: no holder yet) nor once cancelled (NoMembershipCard)."""
    if membership.status == MembershipStatus.PENDING:
        if membership.gift_code and not membership.redeemed_at:
            raise NoMembershipCard(
                _("The gift membership is not redeemed yet: its card comes once it is.")
            )
        raise NoMembershipCard()
    if membership.status == MembershipStatus.CANCELLED:
        raise NoMembershipCard(_("The membership was cancelled: it has no card."))


def printable_membership(*, membership_id: uuid.UUID, viewer) -> Membership:
    """The membership whose card `viewer` asks for: NotFound as owned_membership,
    NoMembershipCard as refuse_unless_card_printable."""
    membership = owned_membership(membership_id=membership_id, viewer=viewer)
    refuse_unless_card_printable(membership)
    return membership


def membership_with_card(*, membership_id: uuid.UUID) -> Membership:
    """The membership, whoever asks, if it has a card (refuse_unless_card_printable): for a face
    that was handed it by a signed link (the wallet's), which grants what the emailed card does.
    UnknownMembership for none."""
    membership = (
        Membership.objects.select_related("membership_type").filter(pk=membership_id).first()
    )
    if membership is None:
        raise UnknownMembership()
    refuse_unless_card_printable(membership)
    return membership


def refuse_unless_gift_card_printable(membership: Membership) -> None:
    """Whether the membership's gift card may be printed, drawn or sent, for every face that does
    (the API's PDF, the desk's print, the purchase email): only a gift's (NoGiftCard), once its
    order is paid and while neither it nor the gift is cancelled, and not once redeemed: the code
    it prints is spent then, and the holder's card is what admits."""
    if not membership.gift_code:
        raise NoGiftCard(_("The membership is not a gift: it has no gift card."))
    if membership.redeemed_at is not None:
        raise NoGiftCard(_("The gift membership was redeemed: its gift code is spent."))
    if membership.status == MembershipStatus.CANCELLED:
        raise NoGiftCard(_("The gift membership was cancelled: it has no gift card."))
    paid = membership.sales.filter(
        kind=MembershipSaleKind.GIFT, cancelled_at__isnull=True, order__status=OrderStatus.CONFIRMED
    )
    if not paid.exists():
        raise NoGiftCard()


def gift_card_membership(*, membership_id: uuid.UUID, viewer) -> Membership:
    """The gift whose card `viewer` asks for: NotFound as viewable_membership (its giver still
    sees it once redeemed), NoGiftCard as refuse_unless_gift_card_printable."""
    membership = viewable_membership(membership_id=membership_id, viewer=viewer)
    refuse_unless_gift_card_printable(membership)
    return membership


def find_memberships(*, query: str, limit: int = 30) -> list[Membership]:
    """Memberships whose card code is `query` (read as the door reads it: codes.read_code), or
    whose holder's email is, or whose holder's name contains it; newest first."""
    text = query.strip()
    if not text:
        return []
    matches = Q(email__iexact=text) | Q(holder_name__icontains=text)
    code = read_code(text)
    if code is not None and code.member_code:
        matches |= Q(card_code=code.member_code)
    found = Membership.objects.filter(matches).select_related("membership_type")
    return list(found.order_by("-created_at", "-pk")[:limit])


@dataclass(frozen=True)
class MemberVisit:
    """A member's visit as the desk lists it: a reservation (its order) or a walk-in at the
    door on a day without entry slots."""

    date: date
    people: int
    order: Order | None = None
    entered_at: datetime | None = None


def recent_member_visits(membership: Membership, *, limit: int = 10) -> list[MemberVisit]:
    """The membership's latest visits, reserved or walked in, newest first."""
    orders = (
        Order.objects.filter(membership=membership)
        .select_related("slot")
        .annotate(people=Count("tickets"))
        .order_by("-date", "-created_at")[:limit]
    )
    entries = MemberEntry.objects.filter(membership=membership).order_by("-entered_at")[:limit]
    visits = [MemberVisit(date=order.date, people=order.people, order=order) for order in orders]
    visits += [
        MemberVisit(date=entry.date, people=entry.people, entered_at=entry.entered_at)
        for entry in entries
    ]
    return sorted(visits, key=lambda visit: visit.date, reverse=True)[:limit]
