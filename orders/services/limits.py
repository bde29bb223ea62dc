"""Places that cannot be hoarded: an online account, and each buyer's mailbox within it, holds
at most so many places at once, takes at most so many per visit date, held or sold, and at most
so many free places (confirmed and mailed without a payment) in 24 hours; and how many tickets
one order may have (more at the front desk, which sells to groups).

Staff at the front desk (orders.sell_at_desk) sell to the people before them: no limits. A hold
its own buyer cancelled counts until it would have run out, so cancelling and holding
again gains nothing; a free place counts for 24 hours, cancelled or not. A sales partner (on
account, through /v1.1 or OCTO) holds at most MUSEUM_PARTNER_MAX_HELD_PLACES places unpaid at
once, its cancelled holds not counted (a partner's cancellation gives the places back at once,
and a rebooking cancels one hold for another), and has no other limit unless staff set its own
(SaleLimits); an online account with its own values (a shop, a kiosk) still has the museum's
per-mailbox limits.

An address counts as the mailbox it reaches (`mailbox_of`), here and for the daily limit of
emails (`mailbox_full`), so that its spellings share one limit.

Checked in the sale's transaction under the account's row lock, so concurrent sales of one
account are counted one after the other.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils import timezone

from museum.kept import Kept
from orders.exceptions import TooManyFreePlaces, TooManyHeldPlaces, TooManyPlaces
from orders.models import Channel, OrderStatus, SaleLimits, Ticket
from orders.providers import SELL_AT_DESK

# Mail providers whose mailboxes ignore dots in the local part (and the other name of Gmail).
DOTS_IGNORED = {"gmail.com", "googlemail.com"}
SAME_MAILBOX_DOMAIN = {"googlemail.com": "gmail.com"}


def mailbox_of(email: str) -> str:
    """The mailbox `email` reaches, as every limit counts it: lower case, without the local
    part's quotes or `+tag`, and without its dots where the provider ignores them
    ("V.Ictim+1"@Gmail.com is victim@gmail.com)."""
    if "@" not in email:
        return email.strip().lower()  # none (a desk sale without email)
    local, _, domain = email.strip().lower().rpartition("@")
    local = local.replace('"', "").replace("\\", "").split("+", 1)[0]
    if domain in DOTS_IGNORED:
        local = local.replace(".", "")
    return f"{local}@{SAME_MAILBOX_DOMAIN.get(domain, domain)}"


# How many emails each kind of row sent a mailbox since a moment: the orders' own and those
# the apps above register (their AppConfig.ready), which the sale cannot import.
EmailCounter = Callable[[str, datetime], int]
_EMAIL_COUNTERS: list[EmailCounter] = []


def register_email_counter(counter: EmailCounter) -> None:
    if counter not in _EMAIL_COUNTERS:
        _EMAIL_COUNTERS.append(counter)


def mailbox_full(mailbox: str, *, now: datetime) -> bool:
    """Whether the mailbox had its day's emails (MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY): every
    email the museum sent it in the day before `now` counts, whichever app sent it, so that no
    way of making the museum mail someone floods their mailbox."""
    since = now - timedelta(days=1)
    sent = sum(counter(mailbox, since) for counter in _EMAIL_COUNTERS)
    return sent >= settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY


@dataclass(frozen=True)
class Limits:
    held: int | None
    per_day: int | None
    free_per_day: int | None = None


NO_LIMITS = Limits(None, None, None)
# The accounts' own limits, by account, kept in each process until staff change one
# (orders/apps.py connects the change): few accounts have them, every sale looks.
OWN_LIMITS: Kept[dict[int, SaleLimits]] = Kept(
    "sale-limits", lambda: {limits.account_id: limits for limits in SaleLimits.objects.all()}
)


def max_tickets_per_order(*, seller=None) -> int:
    """How many tickets one order may have: MUSEUM_MAX_TICKETS_PER_ORDER, or, sold at the front
    desk by `seller` (who may sell there), MUSEUM_DESK_MAX_TICKETS_PER_ORDER: a school class
    buys at once."""
    if seller is not None and seller.has_perm(SELL_AT_DESK):
        return settings.MUSEUM_DESK_MAX_TICKETS_PER_ORDER
    return settings.MUSEUM_MAX_TICKETS_PER_ORDER


def limits_of(account, *, channel: str) -> tuple[Limits, Limits]:
    """The account's limits, and those of each mailbox within it (None: no limit)."""
    if account.has_perm(SELL_AT_DESK):
        # Staff at the desk sell to the people in front of them, for many a day.
        return NO_LIMITS, NO_LIMITS
    own = OWN_LIMITS.get().get(account.pk)
    online = channel == Channel.ONLINE
    museum = Limits(
        settings.MUSEUM_MAX_HELD_PLACES,
        settings.MUSEUM_MAX_PLACES_PER_DAY,
        settings.MUSEUM_MAX_FREE_PLACES_PER_DAY,
    )
    default = museum if online else Limits(settings.MUSEUM_PARTNER_MAX_HELD_PLACES, None, None)

    mine = own or SaleLimits()
    account_limits = Limits(
        held=_either(mine.max_held_places, default.held),
        per_day=_either(mine.max_places_per_day, default.per_day),
        free_per_day=_either(mine.max_free_places_per_day, default.free_per_day),
    )
    return account_limits, museum if online else account_limits


def _either(own: int | None, default: int | None) -> int | None:
    return default if own is None else own


def check_places(
    *,
    buyer,
    mailbox: str,
    ticket_date: date,
    n: int,
    held: bool,
    free: bool,
    channel: str,
    member: int = 0,
) -> None:
    """Refuse a sale of n places that would take the account, or the mailbox, over a limit;
    `free`: the order costs nothing. Of the n, `member` are a member visit's free places, which
    the free-places limit leaves out: the membership was paid for, and admits its own few."""
    account_limits, address_limits = limits_of(buyer, channel=channel)
    counted = (held, True, free and n > member)  # which of held, per_day, free_per_day count
    if not any(_counts(limits, counted) for limits in (account_limits, address_limits)):
        return  # none of the limits speaks of this sale (a partner's, paid at once): no lock
    # One sale of the account at a time from here to the commit.
    get_user_model().objects.select_for_update().filter(pk=buyer.pk).first()
    now = timezone.now()
    online = channel == Channel.ONLINE
    tickets = Ticket.objects.filter(order__buyer=buyer)
    checks = [("account", account_limits, tickets)]
    # A mailbox's places are among its account's: under the same limits it cannot pass them.
    if address_limits != account_limits:
        checks.append(("email address", address_limits, tickets.filter(order__mailbox=mailbox)))
    for who, limits, mine in checks:
        if held and limits.held is not None:
            if _held(mine, now=now, cancelled_too=online).count() + n > limits.held:
                raise TooManyHeldPlaces(limit=limits.held, who=who if online else "partner")
        if limits.per_day is not None:
            taken = mine.filter(date=ticket_date).filter(
                Q(cancelled_at__isnull=True) | _still_held(now)
            )
            if taken.count() + n > limits.per_day:
                raise TooManyPlaces(limit=limits.per_day, who=who)
        if free and n > member and limits.free_per_day is not None:
            given = mine.filter(
                order__total=0, order__created_at__gt=now - timedelta(days=1), member=False
            )
            if given.count() + n - member > limits.free_per_day:
                raise TooManyFreePlaces(limit=limits.free_per_day, who=who)


def _counts(limits: Limits, counted: tuple[bool, bool, bool]) -> bool:
    values = (limits.held, limits.per_day, limits.free_per_day)
    return any(asked and value is not None for asked, value in zip(counted, values, strict=True))


def _still_held(now: datetime) -> Q:
    # Held, or cancelled while held, until the hold would have run out.
    return Q(order__confirmed_at__isnull=True, order__hold_expires_at__gt=now)


def _held(tickets, *, now: datetime, cancelled_too: bool):
    if cancelled_too:
        return tickets.filter(_still_held(now))
    return tickets.filter(order__status=OrderStatus.HELD, order__hold_expires_at__gt=now)
