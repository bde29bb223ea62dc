"""Places that cannot be hoarded: an online account, and each buyer's address within it, holds
at most so many places at once and takes at most so many per visit date, held or sold; and how
many tickets one order may have (more at the front desk, which sells to groups).

Staff at the front desk (orders.sell_at_desk) sell to the people before them: no limits. A hold
its own buyer cancelled counts until it would have run out, so cancelling and holding
again gains nothing. Sales partners have no limits unless staff set their own (SaleLimits); an
online account with its own values (a shop, a kiosk) still has the museum's per-address limits.

Checked in the sale's transaction under the account's row lock, so concurrent sales of one
account are counted one after the other.
"""

from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils import timezone

from orders.exceptions import TooManyHeldPlaces, TooManyPlaces
from orders.models import Channel, SaleLimits, Ticket
from orders.providers import SELL_AT_DESK


@dataclass(frozen=True)
class Limits:
    held: int | None
    per_day: int | None


def max_tickets_per_order(*, seller=None) -> int:
    """How many tickets one order may have: MUSEUM_MAX_TICKETS_PER_ORDER, or, sold at the front
    desk by `seller` (who may sell there), MUSEUM_DESK_MAX_TICKETS_PER_ORDER: a school class
    buys at once."""
    if seller is not None and seller.has_perm(SELL_AT_DESK):
        return settings.MUSEUM_DESK_MAX_TICKETS_PER_ORDER
    return settings.MUSEUM_MAX_TICKETS_PER_ORDER


def limits_of(account, *, channel: str) -> tuple[Limits, Limits]:
    """The account's limits, and those of each address within it (None: no limit)."""
    if account.has_perm(SELL_AT_DESK):
        # Staff at the desk sell to the people in front of them, for many a day.
        return Limits(None, None), Limits(None, None)
    own = SaleLimits.objects.filter(account=account).first()
    online = channel == Channel.ONLINE
    museum = Limits(settings.MUSEUM_MAX_HELD_PLACES, settings.MUSEUM_MAX_PLACES_PER_DAY)
    default = museum if online else Limits(None, None)
    account_limits = Limits(
        held=own.max_held_places if own and own.max_held_places is not None else default.held,
        per_day=(
            own.max_places_per_day
            if own and own.max_places_per_day is not None
            else default.per_day
        ),
    )
    return account_limits, museum if online else account_limits


def check_places(*, buyer, email: str, ticket_date: date, n: int, held: bool, channel: str) -> None:
    """Refuse a sale of n places that would take the account, or the address, over a limit."""
    account_limits, address_limits = limits_of(buyer, channel=channel)
    if account_limits == address_limits == Limits(None, None):
        return
    # One sale of the account at a time from here to the commit.
    get_user_model().objects.select_for_update().filter(pk=buyer.pk).first()
    now = timezone.now()
    tickets = Ticket.objects.filter(order__buyer=buyer)
    for who, limits, mine in (
        ("account", account_limits, tickets),
        ("email address", address_limits, tickets.filter(order__email__iexact=email)),
    ):
        if held and limits.held is not None:
            if _held(mine, now=now).count() + n > limits.held:
                raise TooManyHeldPlaces(limit=limits.held, who=who)
        if limits.per_day is not None:
            taken = mine.filter(date=ticket_date).filter(
                Q(cancelled_at__isnull=True) | _still_held(now)
            )
            if taken.count() + n > limits.per_day:
                raise TooManyPlaces(limit=limits.per_day, who=who)


def _still_held(now: datetime) -> Q:
    # Held, or cancelled while held, until the hold would have run out.
    return Q(order__confirmed_at__isnull=True, order__hold_expires_at__gt=now)


def _held(tickets, *, now: datetime):
    return tickets.filter(_still_held(now))
