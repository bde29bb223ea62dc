"""Letting members in by their card at the door: a signed card token (`MM1.`) or its typed card
code names the membership. A member visit booked for today (a member order: on a timed day the
only way in) is admitted whole, as its order's code admits it, by the door's own check-in and its
rules; without one, on a day without entry slots, the card admits walk-ins (MemberEntry), at most
the type's `admits` people a day, counted under the membership's row lock.
"""

from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import record
from hours.models import EntrySlot, MuseumDay
from museum import metrics
from museum.exceptions import MuseumProblem
from orders import tokens
from orders.codes import read_code
from orders.models import MemberEntry, Membership, Validity
from orders.services import member_cards
from orders.services.member_visits import lock_membership, places_left, visit_on
from tickets.exceptions import (
    AfterClosing,
    CardCancelled,
    CardExpired,
    CardNotPaid,
    CardNotValidYet,
    CardReplaced,
    ForgedTicket,
    MemberCardRefused,
    MemberVisitsUsed,
    NoMemberVisit,
    TicketRefused,
    UnknownMemberCard,
)
from tickets.groups import GroupAdmission, check_in_group, group_of
from tickets.selectors import scan_key
from tickets.services import Admission, check_in_order, check_in_scan


@dataclass(frozen=True)
class MemberAdmission:
    """What a member card's scan did: the people it let in, through today's booked member visit
    (`admission`, its tickets) or as walk-ins (`left_today`: how many more the card admits)."""

    membership: Membership
    people: int
    admission: Admission | None = None
    left_today: int | None = None


def _memberships():
    return Membership.objects.select_related("membership_type")


def member_card(scanned: str) -> Membership | None:
    """The membership a scanned card names: by its signed token (ForgedTicket if its signature
    fails) or its typed card code; None if the text is no member card (a ticket's or an order's
    code, read by check_in). A card code typed with its prefix that no membership has, or a
    token of one that is gone, is UnknownMemberCard; a replaced card's token or code,
    CardReplaced."""
    text = scanned.strip()
    if text[: len(tokens.MEMBER_CARD_PREFIX)].upper() == tokens.MEMBER_CARD_PREFIX:
        try:
            found, replaced = member_cards.membership_of_token(text)
        except tokens.InvalidTicketToken:
            raise ForgedTicket() from None
        if found is None:
            raise UnknownMemberCard()
        if replaced:
            raise CardReplaced(membership=found)
        return found
    if text[: len(tokens.PREFIX)].upper() == tokens.PREFIX:
        return None  # a ticket's token: the door's every scan, read by check_in alone
    typed = read_code(text)
    if typed is None or typed.member_code is None:
        return None
    found = _memberships().filter(card_code=typed.member_code).first()
    if found is None and (lost := member_cards.replaced_card(typed.member_code)) is not None:
        raise CardReplaced(membership=lost)
    if found is None and not (typed.ticket_codes or typed.order_code):
        raise UnknownMemberCard()
    return found


def admit(
    *, scanned: str, by, people: int | None = None
) -> Admission | MemberAdmission | GroupAdmission:
    """The door's one entry point, for the door page and every scanner through the API alike:
    the scanned text (a ticket's token or code, an order's code, a member card's token or its
    typed code) lets its holders in, or raises the refusal with its reason. A member card
    admits today's booked visit whole, or `people` walk-ins on a day without entry slots; a
    group order's code admits `people` of the group (by default all still to come)."""
    membership = member_card(scanned)
    if membership is not None:
        return check_in_member(membership=membership, by=by, people=people)
    scan = scan_key(scanned)
    group = group_of(scan)
    if group is not None:
        return check_in_group(group=group, by=by, people=people)
    return check_in_scan(scan, by=by)


def check_in_member(*, membership: Membership, by, people: int | None = None) -> MemberAdmission:
    """Let the card's holder in today (counting what the door did, museum/metrics.py): today's
    booked member visit whole, or, on a day without entry slots, `people` walk-ins (default: as
    many as the card still admits today). Refused with the reason: a card not valid today,
    no visit booked on a timed day, more people than the card admits a day."""
    now = timezone.now()
    today = timezone.localdate(now)
    with _refusal_counted():
        visit = _todays_visit(membership, today=today)
        if visit is None:
            if EntrySlot.objects.filter(day_id=today).exists():
                raise NoMemberVisit(membership=membership)
            walked_in = _walk_in(membership=membership, by=by, people=people, now=now)
    if visit is not None:
        # The whole reservation, by its order's code: the door's rules, audit and counts.
        try:
            admission = check_in_order(order=visit, by=by)
        except TicketRefused as refused:
            refused.membership = membership
            raise
        return MemberAdmission(membership, people=len(admission.admitted), admission=admission)
    metrics.CHECK_INS.labels("admitted", "").inc(walked_in.people)
    return walked_in


@contextmanager
def _refusal_counted():
    """Count a refusal of the card raised inside, as check_in counts a ticket's."""
    try:
        yield
    except MuseumProblem as refusal:
        metrics.CHECK_INS.labels("refused", refusal.code).inc()
        raise


def _todays_visit(membership: Membership, *, today):
    """The membership's member visit booked for `today` (None without one), once the card is
    valid today; else the card's refusal."""
    refuse_unless_valid_today(membership, today=today)
    return visit_on(membership=membership, day=today)


# The card's refusal for each reason its membership does not admit (Membership.validity_on).
CARD_REFUSALS: dict[str, type[MemberCardRefused]] = {
    Validity.PENDING: CardNotPaid,
    Validity.NOT_YET_VALID: CardNotValidYet,
    Validity.EXPIRED: CardExpired,
    Validity.CANCELLED: CardCancelled,
}


def refuse_unless_valid_today(membership: Membership, *, today) -> None:
    """The card's refusal, by what its membership is today, unless it is valid."""
    reason = membership.validity_on(today)
    if reason != Validity.VALID:
        valid_until = membership.valid_until.isoformat() if membership.valid_until else None
        raise CARD_REFUSALS[reason](membership=membership, validUntil=valid_until)


def _walk_in(*, membership: Membership, by, people: int | None, now: datetime) -> MemberAdmission:
    """Admit `people` on a day without slots while the card admits that many more today."""
    local = timezone.localtime(now)
    day = MuseumDay.objects.filter(date=local.date(), is_closed=False).first()
    if day is None or (day.closes_at is not None and local.time() >= day.closes_at):
        raise AfterClosing()
    admits = membership.membership_type.admits
    with transaction.atomic():
        # One scan or sale of the card's day at a time counts what it let in and booked.
        locked = lock_membership(membership)
        refuse_unless_valid_today(locked, today=local.date())  # as it is now, under the lock
        left = places_left(locked, day=local.date())
        count = left if people is None else people
        if left <= 0 or not 1 <= count <= left:
            raise MemberVisitsUsed(
                _("The card admits %(admits)s people a day; %(left)s more today.")
                % {"admits": admits, "left": max(left, 0)},
                membership=membership,
                admits=admits,
                left=max(left, 0),
            )
        entry = MemberEntry.objects.create(
            membership=membership, date=local.date(), people=count, admitted_by=by
        )
        record(
            action=Action.CHECKED_IN,
            obj=entry,
            by=by,
            changes={"membership": str(membership.pk), "people": count},
        )
    return MemberAdmission(membership, people=count, left_today=left - count)
