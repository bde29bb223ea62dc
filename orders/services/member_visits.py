"""Member visits: a membership's free places in an order (its member lines), the rules that
admit them, and one member visit a day per membership.

A member visit is an order that names a membership: on general entry its member lines
(orders.models.MEMBER_CATEGORY) are free places for up to the type's `admits` people, which take the
slot's kept member places first (hours.locking); beside them the order may sell other lines at
their prices. On a special event there are no free places: the order's lines cost the event's
price less the type's event discount. Either way it is the membership's visit of the day (the
`one_member_visit_a_day` constraint).
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date

from django.db import IntegrityError
from django.db.models import Sum, UniqueConstraint
from django.utils import timezone
from django.utils.translation import gettext as _

from museum.exceptions import InvalidInput
from orders.exceptions import MemberPlacesUsed, MemberVisitExists, UnknownMembership
from orders.models import (
    MEMBER_CATEGORY,
    MemberEntry,
    Membership,
    Order,
    OrderStatus,
    Ticket,
    TicketType,
)
from orders.providers import SELL_AT_DESK
from orders.services.limits import mailbox_of
from orders.services.membership_periods import refuse_unless_valid


def _one_visit_a_day() -> tuple[str, str]:
    """The constraint a second member visit of a day breaks (Order's unique membership and
    date), as each database names it: PostgreSQL by its name, SQLite by its table's columns."""
    meta = Order._meta
    [constraint] = [
        c
        for c in meta.constraints
        if isinstance(c, UniqueConstraint) and tuple(c.fields) == ("membership", "date")
    ]
    column = {field.name: field.column for field in meta.concrete_fields}
    columns = ", ".join(f"{meta.db_table}.{column[name]}" for name in constraint.fields)
    return constraint.name, columns


ONE_VISIT_A_DAY = _one_visit_a_day()


def member_places_of(lines: Sequence[dict]) -> int:
    """How many of the lines' places are members' free ones."""
    return sum(line["quantity"] for line in lines if line["category"] == MEMBER_CATEGORY)


def check_member_lines(
    *, lines: Sequence[dict], membership: Membership | None, ticket_type: str
) -> int:
    """The order's member places, once its lines fit its membership: member lines only with a
    membership, on general entry, and for at most the type's `admits` people; a membership on
    general entry comes with member lines (InvalidInput naming the line otherwise)."""
    member_lines = [i for i, line in enumerate(lines) if line["category"] == MEMBER_CATEGORY]
    if member_lines and membership is None:
        raise InvalidInput(
            f"lines.{member_lines[0]}.category",
            _("Member places need a membership: name it in `membership`."),
        )
    if membership is None:
        return 0
    if ticket_type != TicketType.GENERAL:
        if member_lines:
            raise InvalidInput(
                f"lines.{member_lines[0]}.category",
                _("Member places are for general entry; on a special event members pay less."),
            )
        return 0
    if not member_lines:
        raise InvalidInput("lines", _("A member visit has a line of category 'member'."))
    admits, counted = membership.membership_type.admits, 0
    for index in member_lines:
        counted += lines[index]["quantity"]
        if counted > admits:
            raise InvalidInput(
                f"lines.{index}.quantity",
                _("This membership admits at most %(admits)s people a visit.") % {"admits": admits},
            )
    return counted


def may_use(*, membership: Membership, buyer, seller=None) -> bool:
    """Whether `buyer` may book a visit on the membership: its own account's (that bought it,
    or whose email is the holder's), or staff selling at the desk."""
    for account in (seller, buyer):
        if account is not None and account.has_perm(SELL_AT_DESK):
            return True
    if membership.buyer_id == buyer.pk:
        return True
    email = getattr(buyer, "email", "")
    return bool(email and membership.email) and mailbox_of(email) == mailbox_of(membership.email)


def refuse_unless_may_use(*, membership: Membership, buyer=None, seller=None) -> None:
    """UnknownMembership for a membership `buyer` may not use (another's): the first check of
    any operation that names one, so that no later rule (how many it admits, its type, its
    validity) tells anything of another account's membership."""
    if buyer is not None and not may_use(membership=membership, buyer=buyer, seller=seller):
        raise UnknownMembership()


def refuse_member_visit(
    *, membership: Membership, ticket_date: date, buyer=None, seller=None
) -> None:
    """Refuse a member visit on `ticket_date`: a membership the buyer may not use reads as
    unknown, one not valid that day is MembershipNotValid (with its `validUntil`), one with a
    visit that day already MemberVisitExists."""
    refuse_unless_usable(membership=membership, ticket_date=ticket_date, buyer=buyer, seller=seller)
    if visit_on(membership=membership, day=ticket_date) is not None:
        raise MemberVisitExists(ticketDate=ticket_date.isoformat())


def refuse_unless_usable(
    *, membership: Membership, ticket_date: date, buyer=None, seller=None
) -> None:
    """UnknownMembership for a membership `buyer` may not use (another's), MembershipNotValid
    for one not valid on `ticket_date`."""
    refuse_unless_may_use(membership=membership, buyer=buyer, seller=seller)
    refuse_unless_valid(membership, ticket_date)


def visit_on(*, membership: Membership, day: date) -> Order | None:
    """The membership's member visit (held or confirmed) on `day`, if any."""
    return (
        Order.objects.filter(
            membership=membership,
            date=day,
            status__in=[OrderStatus.HELD, OrderStatus.CONFIRMED],
        )
        .order_by("created_at")
        .first()
    )


def places_left(membership: Membership, *, day: date) -> int:
    """How many more people the membership may let in on `day`: its type's `admits` less its
    walk-ins at the door and the member places of its visits held or confirmed that day, one
    count however they came. Within the transaction that takes them, once the membership's row
    is locked (lock_membership): a scan and a sale of the same day count one after the other."""
    walked_in = MemberEntry.objects.filter(membership=membership, date=day).aggregate(
        people=Sum("people")
    )["people"]
    booked = Ticket.objects.filter(
        order__membership=membership,
        order__date=day,
        order__status__in=[OrderStatus.HELD, OrderStatus.CONFIRMED],
        member=True,
        cancelled_at__isnull=True,
    ).count()
    return membership.membership_type.admits - (walked_in or 0) - booked


def lock_membership(membership: Membership) -> Membership:
    """The membership's row locked, as it is now: after any order a change locks, before any
    place (hours/locking.py)."""
    return (
        Membership.objects.select_for_update(of=("self",))
        .select_related("membership_type")
        .get(pk=membership.pk)
    )


def take_member_places(membership: Membership, *, day: date, n: int) -> None:
    """In the sale's transaction, under the membership's lock: refuse a member visit on `day`
    of a membership no longer valid that day (cancelled since the sale's first check), or of
    `n` member places beyond what it still admits that day (MemberPlacesUsed: its walk-ins
    count too)."""
    locked = lock_membership(membership)
    refuse_unless_valid(locked, day)
    if not n or day != timezone.localdate():
        return  # walk-ins come on the museum's today alone, and a day has one member visit
    left = places_left(locked, day=day)
    if n > left:
        admits = locked.membership_type.admits
        raise MemberPlacesUsed(
            _("The membership admits %(admits)s people a day; %(left)s more on that day.")
            % {"admits": admits, "left": max(left, 0)},
            admits=admits,
            left=max(left, 0),
        )


@contextmanager
def one_visit_a_day(membership: Membership | None, *, ticket_date: date) -> Iterator[None]:
    """A second member visit of the day that got past the check before the first committed is
    refused by the database: answered as the check answers it."""
    try:
        yield
    except IntegrityError as error:
        if membership is None or not any(name in str(error) for name in ONE_VISIT_A_DAY):
            raise
        raise MemberVisitExists(ticketDate=ticket_date.isoformat()) from None
