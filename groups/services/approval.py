"""Staff approve a group's request: it becomes its group order, confirmed at once with its
tickets valid (the door admits them before payment), invoiced with its terms (a deposit due
MUSEUM_GROUP_DEPOSIT_DAYS after approval, the balance MUSEUM_GROUP_BALANCE_DAYS before the
visit) and paid later (orders' Channel.INVOICE), or on account for a sales partner. Its places
were held by the request: the order takes them over without counting them again."""

from collections.abc import Sequence
from datetime import date, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.models import Action
from audit.services import record
from groups.models import GroupRequest, GroupStatus
from groups.services import guides
from groups.services.pricing import GroupPrice, TourFee, price_group
from groups.services.requests import checked_tour, holding, locked, move, refuse_unless_waiting
from groups.tasks import mail_group
from museum import metrics
from museum.money import ZERO, to_cent
from orders.codes import new_confirmation_code
from orders.models import Channel, Fee, Order, OrderKind, Ticket, TicketType
from orders.services.new_orders import new_order
from orders.services.payments import mark_confirmed, record_on_account_payment
from orders.services.receipts import issue_receipt


def order_of(group: GroupRequest) -> Order:
    """The approved group's order, its row locked for the caller's transaction."""
    return Order.objects.select_for_update().get(group=group)


def counts_of(group: GroupRequest) -> dict:
    """People per visitor category, as its lines say."""
    return {line.category: line.quantity for line in group.lines.select_related("category")}


def approve(
    *,
    request_id,
    by,
    date: date | None = None,
    entry_time: time | None = None,
    tour_id: int | None = None,
    guide_ids: Sequence[int] = (),
) -> GroupRequest:
    """Approve the waiting request (at another `date` and `entry_time` if given: its places move
    there first; with another tour programme if `tour_id` names one), with the guides staff
    chose for its tour: all of it, or nothing (a guide not free refuses the approval)."""

    def approving() -> GroupRequest:
        now = timezone.now()
        group = locked(request_id)
        refuse_unless_waiting(group, now=now)
        if date is not None:
            move(group, day=date, entry_time=entry_time)
        if tour_id is not None:
            group.tour = checked_tour(
                tour_id, language=group.language, kind=group.organisation_kind
            )
        price = price_group(counts_of(group), tour=group.tour, language=group.language)
        order = _group_order(group, price, by=by, now=now)
        before = group.status
        group.status, group.order, group.places = GroupStatus.APPROVED, order, 0
        group.answered_at, group.answered_by = now, by
        _set_terms(group, total=order.total, today=timezone.localdate(now))
        group.save()
        record(
            action=Action.CONFIRMED,
            obj=group,
            by=by,
            changes={
                "status": [before, group.status],
                "order": str(order.pk),
                "total": order.total,
            },
        )
        if group.tour_id is not None:
            _plan_tour(group, guide_ids=guide_ids)
        # Last: its number's lock is held to the commit.
        issue_receipt(order, terms=terms_of(group))
        mail_group(group, "approved")
        return group

    # Only a move counts places anew: holding gives back what ran out on its day if it is full.
    return holding(approving, day=date) if date is not None else _in_transaction(approving)


def _in_transaction(step):
    with transaction.atomic():
        return step()


def _plan_tour(group: GroupRequest, *, guide_ids: Sequence[int]) -> None:
    """The tour's guides, in the approval's transaction: as many as it needs, those staff chose
    asked (each checked free under the guide's lock, or the approval is refused); any left
    without one shows on the desk's list."""
    assignments = guides.plan_tour(group)
    for assignment, guide_id in zip(assignments, guide_ids, strict=False):
        guides.assign(assignment_id=assignment.pk, guide_id=guide_id, by=group.answered_by)


def _group_order(group: GroupRequest, price: GroupPrice, *, by, now) -> Order:
    """The group's order, confirmed with its tickets (one a person) and its tour's fee."""
    buyer = group.account or by
    order = new_order(
        buyer=buyer,
        email=group.email,
        language=group.language,
        kind=OrderKind.GENERAL,
        day=group.date,
        total=price.total,
        name=group.contact_name,
        phone=group.phone,
        slot=group.slot,
        invoice_company=group.organisation,
        invoice_address=group.address,
        invoice_vat_id=group.vat_id,
    )
    if order.channel != Channel.ON_ACCOUNT:
        order.channel = Channel.INVOICE
    mark_confirmed(order, now=now, new=True)
    order.sold_tickets = Ticket.objects.bulk_create(
        new_ticket(order, unit.category, unit.taxed) for unit in price.units
    )
    order.sold_fees = Fee.objects.bulk_create(new_fee(order, fee) for fee in price.fees)
    order.sold_donations = []
    record_on_account_payment(order)
    record(
        action=Action.CREATED,
        obj=order,
        by=by,
        changes={
            "status": order.status,
            "total": order.total,
            "date": order.date,
            "slot": order.slot_id,
            "tickets": len(order.sold_tickets),
            "group": str(group.pk),
        },
    )
    metrics.count_tickets(metrics.TICKETS_SOLD, order.sold_tickets)
    return order


def new_ticket(order: Order, category, taxed) -> Ticket:
    """One person's ticket of the group's order (the day's row counts it, as a sale's)."""
    return Ticket(
        buyer_id=order.buyer_id,
        ticket_type=TicketType.GENERAL,
        date=order.date,
        price=taxed.gross,
        tax_rate=taxed.rate,
        tax=taxed.tax,
        confirmation_code=new_confirmation_code(f"ticket-{TicketType.GENERAL}"),
        order=order,
        held=False,
        category=category,
        slot_id=order.slot_id,
        museum_day_id=order.date,
    )


def new_fee(order: Order, fee: TourFee) -> Fee:
    """The tour's fee as a line of the group's order."""
    return Fee(
        order=order,
        description=fee.description,
        price=fee.taxed.gross,
        tax_rate=fee.taxed.rate,
        tax=fee.taxed.tax,
    )


def _set_terms(group: GroupRequest, *, total: Decimal, today: date) -> None:
    """The invoice's terms: a deposit of MUSEUM_GROUP_DEPOSIT_PERCENT due
    MUSEUM_GROUP_DEPOSIT_DAYS from `today`, the balance MUSEUM_GROUP_BALANCE_DAYS before the
    visit (never before today, nor the deposit after the balance); numbers are final
    MUSEUM_GROUP_FINAL_DAYS before it."""
    group.deposit = deposit_of(total)
    group.balance_due = max(group.date - timedelta(days=settings.MUSEUM_GROUP_BALANCE_DAYS), today)
    group.deposit_due = min(
        today + timedelta(days=settings.MUSEUM_GROUP_DEPOSIT_DAYS), group.balance_due
    )
    group.final_numbers_date = group.date - timedelta(days=settings.MUSEUM_GROUP_FINAL_DAYS)


def deposit_of(total: Decimal) -> Decimal:
    """The deposit of a group order costing `total`: MUSEUM_GROUP_DEPOSIT_PERCENT of it."""
    return to_cent(total * settings.MUSEUM_GROUP_DEPOSIT_PERCENT / 100)


def terms_of(group: GroupRequest) -> list[dict]:
    """The terms its invoice states: the deposit (if any) and the balance, with their dates;
    none for a sales partner's, paid on account as it is confirmed."""
    assert group.order is not None
    if group.order.channel == Channel.ON_ACCOUNT:
        return []
    total = group.order.total
    deposit = group.deposit or ZERO
    terms = []
    if deposit > 0:
        terms.append({"kind": "deposit", "amount": str(deposit), "due": str(group.deposit_due)})
    terms.append({"kind": "balance", "amount": str(total - deposit), "due": str(group.balance_due)})
    return terms
