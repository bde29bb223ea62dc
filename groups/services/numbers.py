"""A group's numbers change after approval. Until its final-numbers date they change freely:
more within the places left, fewer giving places back, and the invoice is issued anew (a credit
note cancels the last one in full, a new one states the order as it is: issued documents are
never edited). After it, more people only within the places left, and fewer still billed: the
places go back, the tickets are cancelled, but what the order costs stays."""

from collections.abc import Mapping
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from audit.models import Action
from audit.services import record
from groups.exceptions import GroupPaidBeyond, GroupRequestAnswered, UnknownGroupRequest
from groups.models import GroupLine, GroupRequest, GroupStatus
from groups.models.requests import HOLDING
from groups.services import guides
from groups.services.approval import (
    counts_of,
    deposit_of,
    new_fee,
    new_ticket,
    order_of,
    terms_of,
)
from groups.services.pricing import GroupPrice, Unit, price_group
from groups.services.requests import counted, give_back, holding, locked
from groups.tasks import mail_group
from museum.money import ZERO
from orders.exceptions import CheckedIn
from orders.models import Fee, Order, OrderStatus, Ticket, VisitorCategory
from orders.services import places
from orders.services.receipts import reissue_invoice


def final(group: GroupRequest, *, today) -> bool:
    """Whether its numbers are final (past the final-numbers date): fewer are still billed."""
    return group.final_numbers_date is not None and today > group.final_numbers_date


def change_numbers(*, request_id, by, lines: Mapping[str, int]) -> GroupRequest:
    """The approved group's people per category become `lines` ({category code: how many})."""
    wanted = counted(lines)

    def changing() -> GroupRequest:
        now = timezone.now()
        group = locked(request_id)
        if group.status != GroupStatus.APPROVED:
            raise GroupRequestAnswered(status=group.status)
        order = order_of(group)
        price = price_group(wanted, tour=group.tour, language=group.language)
        before, after = renumber(group, order, wanted, price, by=by, now=now)
        if group.tour_id is not None:
            guides.replan_tour(group)
        record(action=Action.CHANGED, obj=group, by=by, changes={"people": [before, after]})
        mail_group(group, "changed")
        return group

    return holding(changing, day=_date_of(request_id))


def _date_of(request_id) -> date:
    day = GroupRequest.objects.filter(pk=request_id).values_list("date", flat=True).first()
    if day is None:
        raise UnknownGroupRequest()
    return day


def cancel_group(*, request_id, by, reason: str = "") -> GroupRequest:
    """The group's visit called off, by the group or staff for it. A waiting request gives its
    places back. An approved one's order is cancelled and its places go back: before the final
    date nothing is owed (a credit note cancels the invoice; what was paid is refunded first),
    after it what it cost is still billed. Refused once anyone came through the door."""
    with transaction.atomic():
        now = timezone.now()
        group = locked(request_id)
        before = group.status
        if group.status in HOLDING:
            give_back(group)
        elif group.status == GroupStatus.APPROVED:
            order = order_of(group)
            if order.tickets.filter(checked_in_at__isnull=False).exists():
                raise CheckedIn()
            renumber(group, order, {}, GroupPrice(), by=by, now=now)
            order.status, order.cancelled_at = OrderStatus.CANCELLED, now
            order.save(update_fields=["status", "cancelled_at"])
        else:
            raise GroupRequestAnswered(status=group.status)
        group.status, group.message = GroupStatus.CANCELLED, reason
        group.save()
        changes = {"status": [before, group.status], "reason": reason}
        record(action=Action.CANCELLED, obj=group, by=by, changes=changes)
        if group.tour_id is not None and before == GroupStatus.APPROVED:
            guides.replan_tour(group)
        mail_group(group, "cancelled")
    return group


def renumber(
    group: GroupRequest,
    order: Order,
    wanted: Mapping[VisitorCategory, int],
    price: GroupPrice,
    *,
    by,
    now,
) -> tuple[int, int]:
    """The locked group and order become `wanted` people at `price`: places taken or given
    back, tickets and fee as they are now, the total their sum, the invoice issued anew if it
    changed, the group's lines; how many people before and after."""
    old = counts_of(group)
    before, after = sum(old.values()), sum(wanted.values())
    if after > before:
        places.take(ticket_date=order.date, event_id=None, slot=order.slot, n=after - before)
    elif after < before:
        places.give_back(order=order, n=before - after)
    billed = final(group, today=timezone.localdate(now))
    _retick(order, price, by=by, now=now, billed=billed)
    _refee(order, price, now=now, billed=billed)
    total = _total_of(order)
    if total < order.paid - order.paid_back:
        raise GroupPaidBeyond()
    changed = total != order.total
    order.total = total
    order.save(update_fields=["total"])
    GroupLine.objects.filter(request=group).delete()
    GroupLine.objects.bulk_create(
        GroupLine(request=group, category=category, quantity=n) for category, n in wanted.items()
    )
    if changed:
        # The deposit is its share of the new total (what was paid counts toward it).
        group.order, group.deposit = order, deposit_of(total)
        group.save(update_fields=["deposit"])
        reissue_invoice(order, terms=terms_of(group))
    return before, after


def _retick(order: Order, price: GroupPrice, *, by, now, billed: bool) -> None:
    """Each category's valid tickets become its units: added, or cancelled (those not yet
    admitted, newest first), and priced anew; after the final date (`billed`) cancelled tickets
    keep their price, still owed, and those kept keep theirs. Before it, a ticket taken off
    costs nothing any more (its price went with the invoice the credit note cancelled)."""
    tickets = list(
        order.tickets.filter(cancelled_at__isnull=True)
        .select_related("category")
        .order_by("purchased_at", "pk")
    )
    by_category: dict[int | None, list[Ticket]] = {}
    for ticket in tickets:
        by_category.setdefault(ticket.category_id, []).append(ticket)
    changed, made = [], []
    for key in set(by_category) | {unit.category.pk for unit in price.units}:
        have = by_category.get(key, [])
        units = [u for u in price.units if u.category.pk == key]
        # Admitted ones first, so that the ones cancelled are those not yet through the door.
        have.sort(key=lambda t: (t.checked_in_at is None, t.purchased_at))
        keep, drop = have[: len(units)], have[len(units) :]
        for ticket in drop:
            ticket.cancelled_at, ticket.cancelled_by = now, by
            if not billed:
                ticket.price, ticket.tax = ZERO, ZERO
            changed.append(ticket)
        if billed:
            units = _left_for_new(keep, units)
        else:
            for ticket, unit in zip(keep, units, strict=False):
                ticket.price, ticket.tax_rate, ticket.tax = (
                    unit.price,
                    unit.taxed.rate,
                    unit.taxed.tax,
                )
                changed.append(ticket)
            units = units[len(keep) :]
        made += [new_ticket(order, unit.category, unit.taxed) for unit in units]
    Ticket.objects.bulk_update(
        changed, ["cancelled_at", "cancelled_by", "price", "tax_rate", "tax"]
    )
    Ticket.objects.bulk_create(made)


def _left_for_new(keep: list[Ticket], units: list[Unit]) -> list[Unit]:
    """Of a category's units, those the tickets kept do not match by price: what new tickets
    cost after the final date (the group's price for its new size, its free chaperones first
    to those already free)."""
    left = list(units)
    for ticket in keep:
        for i, unit in enumerate(left):
            if unit.price == ticket.price:
                del left[i]
                break
        else:
            left.pop()  # kept at its own price: the dearest unit goes with it
    return left


def _refee(order: Order, price: GroupPrice, *, now, billed: bool) -> None:
    """The tour's fee as it is now: a different fee replaces the old one (after the final date
    it never falls)."""
    fees = list(order.fees.filter(cancelled_at__isnull=True))
    old = sum((fee.price for fee in fees), ZERO)
    new = sum((fee.taxed.gross for fee in price.fees), ZERO)
    if new == old or (billed and new < old):
        return
    Fee.objects.filter(pk__in=[fee.pk for fee in fees]).update(cancelled_at=now)
    Fee.objects.bulk_create(new_fee(order, fee) for fee in price.fees)


def _total_of(order: Order) -> Decimal:
    """The group order's total: the sum of its tickets (those cancelled after the final date
    still billed; before it, free) and its fees in force."""
    tickets = sum(order.tickets.values_list("price", flat=True), ZERO)
    fees = sum(order.fees.filter(cancelled_at__isnull=True).values_list("price", flat=True), ZERO)
    return tickets + fees
