"""Memberships: selling, giving, renewing and cancelling them, what one is worth on a date, and
finding one by what a member shows.

A membership is sold as an order's line (MembershipSale), by an order of its own
(OrderKind.MEMBERSHIP, no tickets), paid, refunded, audited and mailed as any order
is: online through a provider (held until paid), at the desk, on a partner's account, or at once
when free. Its period starts when the order is confirmed (orders.services.membership_periods),
a gift's when it is redeemed.

A membership admits from `valid_from` to `valid_until`, both included, while it is active. One
that lapsed reads `expired` whether or not the sweep that marks it has run yet (status_on).

Its holder's name and email are kept while it is valid, and replaced
MUSEUM_PERSONAL_DATA_RETENTION_DAYS after it ends (orders.services.personal_data).
"""

import hashlib
import unicodedata
import uuid
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import AuditEntry, record, record_each
from museum import i18n, metrics
from museum.exceptions import InvalidInput
from orders.codes import new_confirmation_code, read_code
from orders.exceptions import (
    GiftAlreadyRedeemed,
    GiftNotPaid,
    GiftRedeemed,
    MembershipNotRenewable,
    MembershipUsed,
    TooManyMemberships,
    UnknownGift,
    UnknownMembership,
)
from orders.models import (
    Channel,
    Membership,
    MembershipCard,
    MembershipSale,
    MembershipSaleKind,
    MembershipStatus,
    MembershipType,
    Order,
    OrderKind,
    OrderStatus,
    RefundSource,
    Ticket,
    Validity,
)
from orders.services.limits import NO_LIMITS, limits_of
from orders.services.membership_periods import activate, next_period_start
from orders.services.new_orders import new_order, record_new, settle_new, stays_held
from orders.services.payments import mail_change, refund_membership_sales
from orders.services.taxes import Taxed, taxed
from orders.tasks import mail_membership

# Who may sell and renew memberships for others (the desk), and see every membership.
SELL_MEMBERSHIPS = "orders.sell_memberships"


def status_on(membership: Membership, day: date | None = None) -> str:
    """Its status as a member and the API read it on `day` (default the museum's today): an
    active membership whose last day has passed is expired (Membership.validity_on)."""
    if membership.validity_on(day or timezone.localdate()) == Validity.EXPIRED:
        return MembershipStatus.EXPIRED
    return membership.status


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


def active_types() -> QuerySet[MembershipType]:
    return MembershipType.objects.filter(active=True)


def _type_on_sale(code: str) -> MembershipType:
    found = active_types().filter(code=code).first()
    if found is None:
        raise InvalidInput(
            "membershipType", _("No membership type %(code)s is on sale.") % {"code": code}
        )
    return found


# Letters that draw nothing (Hangul fillers, the braille blank): read as blank in a name.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _visible(char: str) -> bool:
    """A letter, digit, punctuation or symbol that shows: not a space, a control, a format
    character (a zero-width space or joiner), nor a mark (an accent shows on a letter)."""
    return unicodedata.category(char)[0] in "LNPS" and char not in BLANK_LETTERS


def _blank(char: str) -> bool:
    return unicodedata.category(char)[0] in "ZC" or char in BLANK_LETTERS


def holder_name_of(text: str) -> str:
    """The holder's name as every path that takes one keeps it (a sale, the desk's too, and a
    gift redeemed): without the spaces and invisible characters around it; InvalidInput on
    holderName unless it has a visible character, as the card and the door page show it."""
    name = text
    while name and _blank(name[0]):
        name = name[1:]
    while name and _blank(name[-1]):
        name = name[:-1]
    if not any(_visible(char) for char in name):
        raise InvalidInput("holderName", _("The member's name is required."))
    return name


def sell_membership(
    *,
    buyer,
    type_code: str,
    holder_name: str,
    email: str,
    start_date: date | None = None,
    gift: bool = False,
    language: str = "",
    seller=None,
) -> Membership:
    """Sell a membership of the type `type_code`, all in one transaction: its order (of the
    type's price, starting on `start_date`, by default today), the order's line and the
    membership, pending until the order is confirmed, which activates it. A gift has no holder
    and starts when it is redeemed (redeem_gift), from its code. `seller`: staff at the desk,
    selling for `buyer` (themselves, or a partner paying on account), whom the audit log
    names.

    A start from today to MUSEUM_MEMBERSHIP_MAX_START_DAYS ahead; an online account buys at most
    MUSEUM_MAX_MEMBERSHIPS_PER_DAY a day, for itself and for each mailbox. The membership's
    `order` is its order, as the answer shows it."""
    membership_type = _type_on_sale(type_code)
    today = timezone.localdate()
    if gift and start_date is not None:
        raise InvalidInput("startDate", _("A gift membership starts when it is redeemed."))
    start = start_date or today
    _refuse_start(start, today=today)
    holder_name = "" if gift else holder_name_of(holder_name)
    language = i18n.offered(language) or i18n.current()
    amounts = membership_taxed(membership_type)
    with transaction.atomic():
        order, held = _new_order(
            buyer=buyer,
            email=email,
            name=holder_name,
            language=language,
            day=start,
            total=amounts.gross,
        )
        membership = Membership.objects.create(
            membership_type=membership_type,
            buyer=buyer,
            holder_name="" if gift else holder_name,
            email="" if gift else email,
            language=language,
            card_code=new_confirmation_code("member"),
            gift_code=new_confirmation_code("gift") if gift else None,
        )
        kind = MembershipSaleKind.GIFT if gift else MembershipSaleKind.NEW
        MembershipSale.objects.create(
            order=order,
            membership=membership,
            kind=kind,
            price=amounts.gross,
            tax_rate=amounts.rate,
            tax=amounts.tax,
        )
        record(
            action=Action.CREATED,
            obj=membership,
            by=seller or buyer,
            changes={"type": membership_type.code, "gift": gift, "order": order.pk},
        )
        _settle(order, held=held, by=seller or buyer)
        membership.refresh_from_db()
    membership.order = order
    return membership


def membership_taxed(membership_type: MembershipType) -> Taxed:
    """A period's amounts: the type's price at its tax rate (orders.services.taxes)."""
    return taxed(price=membership_type.price, rate=membership_type.tax_rate)


def _refuse_start(start: date, *, today: date) -> None:
    if start < today:
        raise InvalidInput("startDate", _("A membership starts today or later."))
    latest = today + timedelta(days=settings.MUSEUM_MEMBERSHIP_MAX_START_DAYS)
    if start > latest:
        raise InvalidInput(
            "startDate",
            _("A membership starts at most %(days)s days ahead.")
            % {"days": settings.MUSEUM_MEMBERSHIP_MAX_START_DAYS},
        )


def _new_order(
    *, buyer, email: str, name: str, language: str, day: date, total: Decimal
) -> tuple[Order, bool]:
    """A membership's order, inserted held (its lines follow it), and whether it stays held:
    an online one with a price, until a provider confirms its payment."""
    order = new_order(
        buyer=buyer,
        email=email,
        language=language,
        kind=OrderKind.MEMBERSHIP,
        day=day,
        total=total,
        name=name,
    )
    check_memberships(buyer=buyer, mailbox=order.mailbox, channel=order.channel)
    order.save(force_insert=True)
    order.sold_tickets = []
    return order, stays_held(order)


def _settle(order: Order, *, held: bool, by) -> None:
    """An order not waiting for a provider (free, a partner's) is confirmed at once, which
    starts its memberships' periods; audited as a sale is, with its final status."""
    settle_new(order, held=held, saved=True)
    changes = {"status": order.status, "total": order.total, "date": order.date, "tickets": 0}
    record_new(order, by=by, held=held, changes={**changes, "email": order.email})


def check_memberships(*, buyer, mailbox: str, channel: str) -> None:
    """Refuse an online account more than MUSEUM_MAX_MEMBERSHIPS_PER_DAY memberships bought or
    renewed in 24 hours, held or paid (an unpaid membership costs nothing to ask for, and a free
    one sends an email), and as many for one mailbox, by whichever accounts bought them online.
    The desk and sales partners without limits of their own are not limited
    (orders.services.limits); sales on a partner's account do not count toward a mailbox's.

    The account's count is taken under its user row's lock, as for places. A mailbox has no row
    to lock, and its buyers are different accounts: on PostgreSQL a transaction-scoped advisory
    lock keyed on the mailbox, taken after the account's, makes the sales of one mailbox wait
    for each other until the commit, however many accounts make them (always in that order, so
    two never wait on each other in a circle). SQLite writes one transaction at a time."""
    if limits_of(buyer, channel=channel) == (NO_LIMITS, NO_LIMITS):
        return
    # One sale of the account at a time from here to the commit, as for places.
    get_user_model().objects.select_for_update().filter(pk=buyer.pk).first()
    limit = settings.MUSEUM_MAX_MEMBERSHIPS_PER_DAY
    recent = MembershipSale.objects.filter(order__created_at__gt=timezone.now() - timedelta(days=1))
    if recent.filter(order__buyer=buyer).count() >= limit:
        raise TooManyMemberships(limit=limit, who="account")
    _lock_mailbox(mailbox)
    if recent.filter(order__mailbox=mailbox, order__channel=Channel.ONLINE).count() >= limit:
        raise TooManyMemberships(limit=limit, who="email address")


def _lock_mailbox(mailbox: str) -> None:
    """Until the commit, the lock of the mailbox's membership sales (check_memberships)."""
    if connection.vendor != "postgresql":
        return
    digest = hashlib.blake2b(f"memberships:{mailbox}".encode(), digest_size=8).digest()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)]
        )


def renew_membership(*, membership: Membership, buyer, seller=None) -> Order:
    """Sell the membership's next period at its type's price, as an order of its own: from the
    day after it ends, if renewed before then or within MUSEUM_MEMBERSHIP_GRACE_DAYS after,
    else from the day it is paid (membership_periods.next_period_start, reckoned again when the
    order is confirmed). Its owner's own, or by staff who sell memberships (`buyer` or
    `seller`, at the desk); a pending or cancelled one is MembershipNotRenewable, as is one
    whose type is no longer on sale."""
    who = seller or buyer
    if who.pk != membership.buyer_id and not who.has_perm(SELL_MEMBERSHIPS):
        raise UnknownMembership()
    with transaction.atomic():
        locked = (
            Membership.objects.select_for_update(of=("self",))
            .select_related("membership_type")
            .get(pk=membership.pk)
        )
        if locked.status not in (MembershipStatus.ACTIVE, MembershipStatus.EXPIRED):
            raise MembershipNotRenewable()
        if not locked.membership_type.active:
            raise MembershipNotRenewable(_("This membership type is no longer on sale."))
        amounts = membership_taxed(locked.membership_type)
        order, held = _new_order(
            buyer=buyer,
            email=locked.email,
            name=locked.holder_name,
            language=locked.language,
            day=next_period_start(locked, day=timezone.localdate()),
            total=amounts.gross,
        )
        MembershipSale.objects.create(
            order=order,
            membership=locked,
            kind=MembershipSaleKind.RENEWAL,
            price=amounts.gross,
            tax_rate=amounts.rate,
            tax=amounts.tax,
        )
        _settle(order, held=held, by=who)
    return order


def redeem_gift(*, gift_code: str, holder_name: str, email: str, by) -> Membership:
    """The gift with this code becomes `holder_name`'s membership, active from today, and the
    account redeeming it its owner (it sees and renews it). Once: of two redemptions at once,
    the second waits for the first's row lock and finds it redeemed (GiftAlreadyRedeemed). Its
    order must be paid (GiftNotPaid); an unknown code is UnknownGift."""
    holder_name = holder_name_of(holder_name)
    code = gift_code.strip().lower()
    now = timezone.now()
    with transaction.atomic():
        membership = (
            Membership.objects.select_for_update(of=("self",))
            .select_related("membership_type")
            .filter(gift_code=code)
            .first()
        )
        if membership is None:
            raise UnknownGift()
        if membership.redeemed_at is not None:
            raise GiftAlreadyRedeemed()
        sale = membership.sales.select_related("order").get(kind=MembershipSaleKind.GIFT)
        if sale.cancelled_at is not None or sale.order.status != OrderStatus.CONFIRMED:
            raise GiftNotPaid()
        membership.holder_name, membership.email = holder_name, email
        membership.redeemed_at, membership.buyer = now, by
        membership.language = i18n.current()
        membership.save(update_fields=["holder_name", "email", "redeemed_at", "buyer", "language"])
        activate(membership, sale, start=timezone.localdate(now), now=now)
        sale.save(update_fields=["valid_from", "valid_until"])
        mail_membership(membership=membership, kind="activated")
    return membership


def cancel_membership_order(
    order: Order, *, by, any_order: bool, now: datetime
) -> dict[uuid.UUID, Membership]:
    """Cancel a membership's order, locked: what it sold is void, what was paid goes back (a
    refund per sale, through the provider that took it), and each membership is cancelled, or
    for a renewal its period shortened again. Within the rule's deadline (the caller's check:
    orders.selectors.cancel_deadline); once a membership admitted a member visit its buyer may
    no longer cancel (MembershipUsed), nor a gift once redeemed, its holder's then
    (GiftRedeemed); staff who may cancel any order still may, refunding it whole, and a redeemed
    gift's holder is mailed. A membership cancelled takes its held orders with it (a renewal not
    paid yet): a payment for one that comes later goes back whole. Audited, which tells the
    webhooks (membership.cancelled). The memberships, locked, as they are now."""
    # The other held orders of its memberships, locked before them as every change of an order
    # locks them: those the cancellation may end.
    others = list(
        Order.objects.select_for_update(of=("self",))
        .filter(
            pk__in=MembershipSale.objects.filter(
                membership__sales__order=order, cancelled_at__isnull=True
            ).values("order_id"),
            status=OrderStatus.HELD,
        )
        .exclude(pk=order.pk)
        .order_by("pk")
    )
    sales = list(
        MembershipSale.objects.filter(order=order, cancelled_at__isnull=True).select_related(
            "membership"
        )
    )
    locked = {
        m.pk: m
        for m in Membership.objects.select_for_update()
        .filter(pk__in=[sale.membership_id for sale in sales])
        .order_by("pk")
    }
    if not any_order and any(_redeemed_gift(locked[sale.membership_id], sale) for sale in sales):
        raise GiftRedeemed()
    if not any_order:
        # A member visit admitted at the door makes it used: its tickets not yet inside are
        # locked before asking, so a scan at this moment waits, then finds them cancelled.
        list(
            Ticket.objects.select_for_update(of=("self",))
            .filter(
                order__membership__in=list(locked),
                date__gte=timezone.localdate(now),
                checked_in_at__isnull=True,
                cancelled_at__isnull=True,
            )
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    if not any_order and any(_used(locked[sale.membership_id], sale) for sale in sales):
        raise MembershipUsed()
    entries: list[AuditEntry] = []
    if order.status == OrderStatus.CONFIRMED and sales:
        source = RefundSource.BUYER if by.pk == order.buyer_id else RefundSource.STAFF
        entries.append(refund_membership_sales(order=order, sales=sales, source=source, by=by)[1])
    MembershipSale.objects.filter(pk__in=[sale.pk for sale in sales]).update(cancelled_at=now)
    for sale in sales:
        sale.cancelled_at = now
        entries.append(_cancelled(locked[sale.membership_id], sale, now=now))
    order.status, order.cancelled_at = OrderStatus.CANCELLED, now
    order.save(update_fields=["status", "cancelled_at"])
    metrics.count_orders(metrics.ORDERS_CANCELLED)
    voided = [sale.pk for sale in sales]
    entries.append((Action.CANCELLED, order, {"membership_sales": voided, "whole_order": True}))
    ended = [pk for pk, m in locked.items() if m.status == MembershipStatus.CANCELLED]
    entries += _let_go_held(others, memberships=ended, now=now)
    record_each(entries=entries, by=by)
    if order.confirmed_at is not None:  # a hold let go was never confirmed to anyone
        mail_change(order, now=now)
    for sale in sales:  # the order's email goes to the giver: a gift's holder is told apart
        cancelled = locked[sale.membership_id]
        if _redeemed_gift(cancelled, sale) and cancelled.status == MembershipStatus.CANCELLED:
            mail_membership(membership=cancelled, kind="cancelled")
    order.sold_tickets = []
    return locked


def _let_go_held(orders: list[Order], *, memberships: list, now: datetime) -> list[AuditEntry]:
    """The locked held orders that sell one of the cancelled `memberships` (a renewal not paid
    yet) are cancelled with their sales: never confirmed, they had nothing paid to refund."""
    ending = [
        o for o in orders if o.membership_sales.filter(membership_id__in=memberships).exists()
    ]
    if not ending:
        return []
    MembershipSale.objects.filter(order__in=ending, cancelled_at__isnull=True).update(
        cancelled_at=now
    )
    Order.objects.filter(pk__in=[o.pk for o in ending]).update(
        status=OrderStatus.CANCELLED, cancelled_at=now
    )
    metrics.count_orders(metrics.ORDERS_CANCELLED, len(ending))
    return [
        (Action.CANCELLED, o, {"whole_order": True, "membership_cancelled": True}) for o in ending
    ]


def _redeemed_gift(membership: Membership, sale: MembershipSale) -> bool:
    """Whether the sale is a gift its holder redeemed: the holder's then, not the giver's."""
    return sale.kind == MembershipSaleKind.GIFT and membership.redeemed_at is not None


def _used(membership: Membership, sale: MembershipSale) -> bool:
    """Whether the membership let anyone in during the sale's period (Membership.admitted_anyone:
    a member visit checked in, or a walk-in at the door)."""
    if sale.valid_from is None or sale.valid_until is None:
        return False
    return membership.admitted_anyone(sale.valid_from, sale.valid_until)


def _cancelled(membership: Membership, sale: MembershipSale, *, now: datetime) -> AuditEntry:
    """A cancelled sale's membership: cancelled, or for a renewal its period back to what its
    other sales bought."""
    before = {"status": membership.status, "valid_until": membership.valid_until}
    kept = list(
        membership.sales.filter(cancelled_at__isnull=True, valid_from__isnull=False)
        .exclude(pk=sale.pk)
        .order_by("valid_from")
    )
    if sale.kind == MembershipSaleKind.RENEWAL and kept:
        if sale.valid_from is not None:
            membership.valid_from, membership.valid_until = _period_of(kept)
            membership.reminded_30_at = membership.reminded_7_at = None
    else:
        membership.status, membership.cancelled_at = MembershipStatus.CANCELLED, now
        # A cancelled membership has no card: the kept one (it prints the name) goes.
        MembershipCard.objects.filter(membership=membership).delete()
    membership.save(
        update_fields=[
            "status",
            "cancelled_at",
            "valid_from",
            "valid_until",
            "reminded_30_at",
            "reminded_7_at",
        ]
    )
    changes = {
        "sale": sale.pk,
        "kind": sale.kind,
        "status": [before["status"], membership.status],
        "valid_until": [before["valid_until"], membership.valid_until],
    }
    return (Action.CANCELLED, membership, changes)


def _period_of(sales: list[MembershipSale]) -> tuple[date, date]:
    """The period the latest of these sales (ordered by start) makes with those right before
    it: from the first day of their unbroken run to its last."""
    start, end = sales[-1].valid_from, sales[-1].valid_until
    assert start is not None and end is not None
    for sale in reversed(sales[:-1]):
        if sale.valid_until is not None and sale.valid_from is not None:
            if sale.valid_until + timedelta(days=1) >= start:
                start = min(start, sale.valid_from)
    return start, end


def expire_lapsed(*, batch_size: int = 500) -> int:
    """Mark the active memberships whose last day has passed expired; how many. Audited, which
    tells the webhooks (membership.expired). Idempotent; a batch a transaction."""
    today = timezone.localdate()
    due = Membership.objects.filter(status=MembershipStatus.ACTIVE, valid_until__lt=today)
    expired = 0
    while True:
        with transaction.atomic():
            batch = list(due.select_for_update().order_by("pk")[:batch_size])
            if not batch:
                return expired
            Membership.objects.filter(pk__in=[m.pk for m in batch]).update(
                status=MembershipStatus.EXPIRED
            )
            record_each(
                entries=[
                    (
                        Action.EXPIRED,
                        m,
                        {"status": [MembershipStatus.ACTIVE, MembershipStatus.EXPIRED]},
                    )
                    for m in batch
                ]
            )
            expired += len(batch)


# The renewal reminders: how many days before a membership's last day each goes, and the field
# that records it went. The later one also goes when the earlier one was too late to.
REMINDERS = ((30, "reminded_30_at"), (7, "reminded_7_at"))


def send_renewal_reminders() -> int:
    """Enqueue the renewal reminders due (30 and 7 days before an active membership's last day);
    how many. Each is claimed with one conditional UPDATE in the transaction that enqueues its
    email, so two workers at once send it once; a renewal confirmed makes them due again for
    the new last day (membership_periods)."""
    today, now = timezone.localdate(), timezone.now()
    sent = 0
    later = 0
    for days, field in reversed(REMINDERS):  # the 7 days' first: none of them also gets the 30's
        window = Q(valid_until__gte=today, valid_until__lte=today + timedelta(days=days))
        if later:
            window &= Q(valid_until__gt=today + timedelta(days=later))
        due = (
            Membership.objects.filter(window, status=MembershipStatus.ACTIVE)
            .filter(**{f"{field}__isnull": True})
            .exclude(email="")
            .values_list("pk", flat=True)
        )
        for pk in list(due):
            with transaction.atomic():
                claimed = Membership.objects.filter(pk=pk, **{f"{field}__isnull": True})
                if claimed.update(**{field: now}):
                    mail_membership(membership=Membership(pk=pk), kind="reminder", days=days)
                    sent += 1
        later = days
    return sent
