"""Placing an order: the one way the museum sells, whether through the orders API, the contract's
`POST /v1.1/tickets` (an order of one ticket of the default category) or the demo data."""

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from hours.models import EntrySlot
from museum import i18n, metrics
from museum.exceptions import InvalidInput
from orders.codes import new_confirmation_code
from orders.exceptions import DateInPast, SoldOut, VoucherBudgetSpent, VoucherUsedUp
from orders.models import (
    Membership,
    Order,
    Ticket,
    TicketType,
    VisitorCategory,
    Voucher,
)
from orders.services import donations as giving
from orders.services import gates, places, vouchers
from orders.services.holds import release_expired_holds
from orders.services.limits import OWN_LIMITS, check_places, max_tickets_per_order
from orders.services.member_visits import (
    check_member_lines,
    one_visit_a_day,
    refuse_member_visit,
    refuse_unless_may_use,
    refuse_unless_usable,
    take_member_places,
)
from orders.services.new_orders import new_order, record_new, settle_new, stays_held
from orders.services.payments import channel_of
from orders.services.pricing import (
    DEFAULT_CATEGORY,
    ON_SALE,
    Line,
    categories_of,
    event_on,
    priced,
    total_of,
)


@dataclass(frozen=True)
class Purchase:
    """Who buys, and for which kind of visit and day: what every ticket of a sale shares."""

    buyer: Any
    email: str
    phone: str
    name: str
    ticket_type: str
    ticket_date: date
    language: str
    membership: Membership | None = None
    mail_buyer: bool = True
    # A business's invoice details (company, address, vat_id): its invoice instead of a receipt.
    invoice: Mapping[str, str] | None = None


def sale_cache_reads() -> list[str]:
    """What a sale reads from the cache (the kept categories' and limits' versions), for its
    view's sign-in to read along (`cache_reads`, museum/authentication.py)."""
    return (
        ON_SALE.cache_reads()
        + OWN_LIMITS.cache_reads()
        + vouchers.ROWS_KEPT.cache_reads()
        + gates.cache_reads()
    )


def place_order(
    *,
    buyer,
    email: str,
    ticket_type: str,
    ticket_date: date,
    lines: Sequence[dict],
    phone: str = "",
    name: str = "",
    event_id: uuid.UUID | None = None,
    entry_time: time | None = None,
    earliest_slot: bool = False,
    hold: bool = False,
    hold_until: datetime | None = None,
    language: str = "",
    seller=None,
    membership: Membership | None = None,
    mail_buyer: bool = True,
    invoice: Mapping[str, str] | None = None,
    voucher: str | None = None,
    octo: bool = False,
    donations: Sequence[dict] = (),
    admission: str | None = None,
) -> Order:
    """Sell the order's tickets, all or none; prices come from the visitor categories.

    `language` (an offered one) is what its email, PDF and tickets speak; by default the active
    language, the request's. `seller` is the staff member selling at the front desk, whose
    orders may be larger (limits.max_tickets_per_order); None for a buyer's own purchase.

    On a timed day the order names its slot (`entry_time`), or with `earliest_slot` takes the
    earliest slot with room, as the contract's purchase does.

    `hold` keeps the order held even where it would be confirmed at once (a partner's, or a
    free one) until confirm_order; `hold_until` when the hold runs out (by default
    MUSEUM_HOLD_MINUTES from now).

    With `membership` it is that membership's member visit of the day
    (orders.services.member_visits): its member lines are free places that take the slot's kept
    member places first, and an event's lines cost less by the type's discount.

    `mail_buyer` False: the museum never mails its buyer (a reseller's customer, whom the
    reseller tells): the order keeps it, so its confirmation, changes and cancellation send
    nothing.

    `invoice` (company, and optionally address and vat_id): a business buys, and is issued an
    invoice rather than a receipt once the order is confirmed (orders.services.receipts).

    `donations` ({"fund", "amount"}): gifts to the museum's funds beside the tickets, in its
    total, untaxed (orders.services.donations).

    `admission`: what the buyer was let in with, where a gate stands in front of these places
    (a drop's waiting room: orders.services.gates).
    """
    count = sum(line["quantity"] for line in lines)
    general = ticket_type == TicketType.GENERAL
    if membership is not None:  # another's reads as unknown, before any rule speaks of it
        refuse_unless_may_use(membership=membership, buyer=buyer, seller=seller)
    # Refused before any row is locked.
    categories, slot = _checked(
        ticket_date=ticket_date,
        lines=lines,
        entry_time=entry_time,
        names_slot=general and not earliest_slot,
        seller=seller,
    )
    member = check_member_lines(lines=lines, membership=membership, ticket_type=ticket_type)
    gifts = giving.checked_gifts(donations)
    if membership is not None:
        refuse_member_visit(
            membership=membership, ticket_date=ticket_date, buyer=buyer, seller=seller
        )
    visit = vouchers.Visit(ticket_type, ticket_date, event_id, entry_time)
    sold_by = {"buyer": buyer, "seller": seller, "octo": octo}
    # Its uses are counted under the lock (after holds that ran out with some went back).
    named = _vouchers(lines, categories, code=voucher, visit=visit, uses_read=False, **sold_by)
    taking = {v.pk: n for v, n in vouchers.uses_wanted(lines, named).items()}
    language = i18n.offered(language) or i18n.current()
    purchase = Purchase(
        buyer,
        email,
        phone,
        name,
        ticket_type,
        ticket_date,
        language,
        membership=membership,
        mail_buyer=mail_buyer,
        invoice=invoice,
    )

    def sell() -> Order:
        if membership is not None:
            take_member_places(membership, day=ticket_date, n=member)
        vouchers.lock(voucher for voucher in named if voucher is not None)
        if general and earliest_slot:
            taken = places.take_earliest_slot(
                ticket_date=ticket_date, n=count, member=member, taking=taking
            )
        else:
            taken = places.take(
                ticket_date=ticket_date,
                event_id=event_id,
                slot=slot,
                n=count,
                member=member,
                taking=taking,
            )
        lines_priced = priced(
            lines=lines,
            categories=categories,
            event=taken.event,
            discount_percent=_discount(membership, event=taken.event),
            discounted=_discounted(membership),
            vouchers=named,
        )
        return _record_order(
            purchase, taken, lines_priced, hold=hold, hold_until=hold_until, gifts=gifts
        )

    entry = gates.Entry(
        **sold_by,
        ticket_type=ticket_type,
        ticket_date=ticket_date,
        event_id=event_id,
        entry_time=entry_time,
        earliest_slot=earliest_slot,
        quantity=count,
        voucher=voucher,
        admission=admission,
    )
    # With earliest_slot, holds that ran out anywhere on the day may free a place.
    with gates.passing(entry), one_visit_a_day(membership, ticket_date=ticket_date):
        return _selling(sell, ticket_date=ticket_date, event_id=event_id, voucher_ids=list(taking))


def _vouchers(
    lines: Sequence[dict],
    categories: Sequence[VisitorCategory | None],
    *,
    code: str | None,
    visit: vouchers.Visit,
    buyer,
    seller,
    octo: bool,
    uses_read: bool = True,
) -> list[Voucher | None]:
    """Each line's voucher (orders.services.vouchers.for_lines), sold by `seller` (at the desk)
    or through OCTO, else on `buyer`'s channel; no query without a code."""
    if not code and not any(line.get("voucher") for line in lines):
        return [None] * len(lines)
    paid_by = channel_of(buyer) if buyer is not None else ""
    channel = vouchers.sale_channel(paid_by=paid_by, seller=seller, octo=octo)
    return vouchers.for_lines(
        lines=lines,
        categories=categories,
        code=code,
        visit=visit,
        channel=channel,
        uses_read=uses_read,
    )


def _discount(membership: Membership | None, *, event) -> int:
    """The member's discount on a special event, in percent; none on general entry."""
    if membership is None or event is None:
        return 0
    return membership.membership_type.event_discount_percent


def _discounted(membership: Membership | None) -> int | None:
    """How many of an order's tickets the member's discount is for: the people the type admits
    (the first in the lines' order), the others paying the full price."""
    return None if membership is None else membership.membership_type.admits


def _checked(
    *,
    ticket_date: date,
    lines: Sequence[dict],
    entry_time: time | None,
    names_slot: bool,
    seller=None,
) -> tuple[list[VisitorCategory | None], EntrySlot | None]:
    """The lines' categories and the slot `entry_time` names, once the order's own rules hold:
    its size (larger sold at the desk by `seller`), its date, its categories on sale and, if the
    order `names_slot` (general entry that does not take the earliest slot), that slot, on
    sale."""
    count = sum(line["quantity"] for line in lines)
    limit = max_tickets_per_order(seller=seller)
    if count > limit:
        raise InvalidInput("lines", _("At most %(limit)s tickets per order.") % {"limit": limit})
    if ticket_date < timezone.localdate():
        raise DateInPast()
    categories = categories_of(lines)
    if not names_slot:
        return categories, None
    slot = places.slot_for(ticket_date=ticket_date, entry_time=entry_time)
    places.refuse_if_sale_ended(ticket_date=ticket_date, slot=slot)
    return categories, slot


@dataclass(frozen=True)
class Quote:
    """What an order would cost: its lines priced, and their total."""

    lines: list[Line]
    total: Decimal
    donations: list[giving.Gift] = field(default_factory=list)


def quote_order(
    *,
    ticket_type: str,
    ticket_date: date,
    lines: Sequence[dict],
    event_id: uuid.UUID | None = None,
    entry_time: time | None = None,
    seller=None,
    membership: Membership | None = None,
    buyer=None,
    voucher: str | None = None,
    octo: bool = False,
    donations: Sequence[dict] = (),
) -> Quote:
    """What place_order would charge for the order, by the same rules and prices, taking no
    place (so a quote says nothing of the places left, nor of a member visit booked that day).
    """
    general = ticket_type == TicketType.GENERAL
    if membership is not None:  # another's reads as unknown, before any rule speaks of it
        refuse_unless_may_use(membership=membership, buyer=buyer, seller=seller)
    categories, _ = _checked(
        ticket_date=ticket_date,
        lines=lines,
        entry_time=entry_time,
        names_slot=general,
        seller=seller,
    )
    check_member_lines(lines=lines, membership=membership, ticket_type=ticket_type)
    gifts = giving.checked_gifts(donations)
    if membership is not None:
        refuse_unless_usable(
            membership=membership, ticket_date=ticket_date, buyer=buyer, seller=seller
        )
    event = None if general else event_on(ticket_date=ticket_date, event_id=event_id)
    visit = vouchers.Visit(ticket_type, ticket_date, event_id, entry_time)
    sold_by = {"buyer": buyer, "seller": seller, "octo": octo}
    lines_priced = priced(
        lines=lines,
        categories=categories,
        event=event,
        discount_percent=_discount(membership, event=event),
        discounted=_discounted(membership),
        vouchers=_vouchers(lines, categories, code=voucher, visit=visit, **sold_by),
    )
    for redemption in vouchers.redemptions_of(lines_priced):
        vouchers.refuse_past_budget(redemption)
    total = total_of(lines_priced) + giving.total_of_gifts(gifts)
    return Quote(lines=lines_priced, total=total, donations=gifts)


def buy_ticket(
    *,
    buyer,
    ticket_type: str,
    ticket_date: date,
    email: str,
    event_id: uuid.UUID | None = None,
    phone: str = "",
    admission: str | None = None,
) -> Ticket:
    """The contract's purchase: an order of one ticket of the default category, in the earliest
    slot with room on a timed day; its ticket."""
    order = place_order(
        admission=admission,
        buyer=buyer,
        email=email,
        phone=phone,
        ticket_type=ticket_type,
        ticket_date=ticket_date,
        event_id=event_id,
        lines=[{"category": DEFAULT_CATEGORY, "quantity": 1}],
        earliest_slot=True,
    )
    return order.sold_tickets[0]


def _selling(
    sell: Callable[[], Order],
    *,
    ticket_date: date,
    event_id: uuid.UUID | None,
    voucher_ids: Sequence[int] = (),
) -> Order:
    """Run the sale `sell` in one transaction. Sold out, it gives back the places of holds that
    ran out on the sale's day (or event date) and, if there were any, runs once more: expired
    holds never block a buyer, whether or not a task worker released them yet. The whole day's,
    not only the slot's: a day full of expired holds in other slots has room for this one. A
    voucher used up or its budget spent, the same for the holds that ran out with its uses."""
    try:
        with transaction.atomic():
            return sell()
    except SoldOut:
        if not release_expired_holds(ticket_date=ticket_date, event_id=event_id):
            raise
    except (VoucherUsedUp, VoucherBudgetSpent):
        if not voucher_ids or not release_expired_holds(voucher_ids=voucher_ids):
            raise
    with transaction.atomic():
        return sell()


def _record_order(
    purchase: Purchase,
    taken: places.Taken,
    lines: list[Line],
    *,
    hold: bool,
    hold_until: datetime | None = None,
    gifts: Sequence[giving.Gift] = (),
):
    order = new_order(
        buyer=purchase.buyer,
        email=purchase.email,
        language=purchase.language,
        kind=purchase.ticket_type,
        day=purchase.ticket_date,
        total=total_of(lines) + giving.total_of_gifts(gifts),
        hold_until=hold_until,
        phone=purchase.phone,
        name=purchase.name,
        event=taken.event,
        slot=taken.slot,
        membership=purchase.membership,
        mail_buyer=purchase.mail_buyer,
        **_invoice_fields(purchase.invoice),
    )
    held = stays_held(order, hold=hold)
    check_places(
        buyer=purchase.buyer,
        mailbox=order.mailbox,
        ticket_date=purchase.ticket_date,
        n=sum(line.quantity for line in lines),
        held=held,
        free=order.total == 0,
        channel=order.channel,
        member=sum(line.quantity for line in lines if line.member),
    )
    settle_new(order, held=held)
    tickets = [
        Ticket(
            buyer=purchase.buyer,
            ticket_type=purchase.ticket_type,
            date=purchase.ticket_date,
            event=taken.event,
            price=line.price,
            tax_rate=line.taxed.rate,
            tax=line.taxed.tax,
            confirmation_code=new_confirmation_code(f"ticket-{purchase.ticket_type}"),
            order=order,
            held=held,
            category=line.category,
            slot=taken.slot,
            member=line.member,
            voucher=line.voucher,
            discount=line.discount,
            # The row that counts the ticket (a museum day's key is its date).
            museum_day_id=None if taken.event else purchase.ticket_date,
            event_date_id=taken.event_date_id,
        )
        for line in lines
        for _ in range(line.quantity)
    ]
    order.sold_tickets = Ticket.objects.bulk_create(tickets)
    giving.record_gifts(order, gifts)
    # Late: a shared code's row is held only for the end of each sale (its receipt's number).
    vouchers.redeem(vouchers.redemptions_of(lines))
    # A new order has no refunds: its answer (refundDue) reads none from the database.
    order.refunded = Decimal("0")
    record_new(order, by=purchase.buyer, held=held, changes=_audited(order))
    if not held:
        metrics.count_tickets(metrics.TICKETS_SOLD, order.sold_tickets)
    return order


def _invoice_fields(invoice: Mapping[str, str] | None) -> dict:
    """The order's fields for a business's invoice details."""
    if not invoice:
        return {}
    return {
        "invoice_company": invoice["company"],
        "invoice_address": invoice.get("address", ""),
        "invoice_vat_id": invoice.get("vat_id", ""),
    }


def _audited(order: Order) -> dict:
    """What the audit log keeps of a new order (its email and phone are personal data)."""
    return {
        "status": order.status,
        "total": order.total,
        "date": order.date,
        "event": order.event_id,
        "slot": order.slot_id,
        "tickets": len(order.sold_tickets),
        **({"donations": [d.pk for d in order.sold_donations]} if order.sold_donations else {}),
        "email": order.email,
        "phone": order.phone,
        **({"membership": order.membership_id} if order.membership_id else {}),
    }
