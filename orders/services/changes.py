"""Changes to a sold order: moving it to another day or slot, its buyer's contact, sending its
confirmation again, and paying a cash refund out over the counter."""

import uuid
from datetime import date, time
from decimal import Decimal

from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import record
from museum.exceptions import InvalidInput
from orders.exceptions import GroupOrder, OrderCancelled
from orders.models import BuyerEmail, Channel, Order, OrderStatus, RefundState, Ticket, TicketImage
from orders.providers import DESK
from orders.selectors import order_to_change, refuse_unless_printable, tickets_of
from orders.services import places
from orders.services.limits import mailbox_of
from orders.services.member_visits import refuse_member_visit
from orders.services.payments import count_email, mail_change
from orders.tasks import EMAIL_FIELDS, mail_confirmation

# A move keeps what was paid: it changes when, never what.
MOVABLE = (OrderStatus.CONFIRMED, OrderStatus.HELD)


def move_order(
    *, order_id: uuid.UUID, by, ticket_date: date, entry_time: time | None = None
) -> Order:
    """Move the order's valid tickets to another day (and slot), or an event's other date, at
    the same prices: the new places are taken and the old ones given back in one transaction,
    under the sale's lock order (the order's row first), and a confirmed order's visitor is
    mailed its tickets for the new day. Sold out there: nothing moves."""
    with transaction.atomic():
        order = order_to_change(order_id=order_id, by=by)
        if order.status not in MOVABLE:
            raise OrderCancelled()
        if order.channel == Channel.INVOICE:
            raise GroupOrder()
        rows = list(
            Ticket.objects.select_for_update()
            .filter(order=order, cancelled_at__isnull=True, checked_in_at__isnull=True)
            .values_list("pk", "member")
        )
        valid = [pk for pk, _member in rows]
        member = sum(is_member for _pk, is_member in rows)
        if not valid:
            raise OrderCancelled(_("No ticket of this order is left to move."))
        if ticket_date < timezone.localdate():
            raise InvalidInput("ticketDate", _("The new date is in the past."))
        slot = None
        if order.event_id is None:
            slot = places.slot_for(ticket_date=ticket_date, entry_time=entry_time)
            places.refuse_if_sale_ended(ticket_date=ticket_date, slot=slot)
        if (ticket_date, slot) == (order.date, order.slot):
            raise InvalidInput("ticketDate", _("The order is already for that day and slot."))
        if order.membership is not None and ticket_date != order.date:
            refuse_member_visit(membership=order.membership, ticket_date=ticket_date)
        taken = places.take(
            ticket_date=ticket_date,
            event_id=order.event_id,
            slot=slot,
            n=len(valid),
            member=member,
        )
        places.give_back(order=order, n=len(valid), member=member)
        Ticket.objects.filter(pk__in=valid).update(
            date=ticket_date,
            slot=taken.slot,
            museum_day_id=None if order.event_id else ticket_date,
            event_date_id=taken.event_date_id,
        )
        # Drawn again with the new day and slot.
        TicketImage.objects.filter(ticket_id__in=valid).only("pk").delete()
        moved = {
            "date": [order.date, ticket_date],
            "slot": [order.slot_id, taken.slot.pk if taken.slot else None],
        }
        order.date, order.slot = ticket_date, taken.slot
        order.save(update_fields=["date", "slot"])
        record(action=Action.CHANGED, obj=order, by=by, changes=moved)
        if order.status == OrderStatus.CONFIRMED:  # a held one's email goes when it is paid
            mail_change(order, now=timezone.now())
    order.sold_tickets = list(tickets_of(order))
    return order


def change_contact(*, order_id: uuid.UUID, by, email: str, name: str, phone: str) -> Order:
    """The order's contact as given (a reseller's customer's, OCTO's PATCH): its email, and the
    mailbox its limits and emails count by, its name and phone, under the order's lock, with an
    audit record of what changed (the webhooks follow it). The same contact again writes
    nothing. No email goes: the new address did not ask for one."""
    with transaction.atomic():
        order = order_to_change(order_id=order_id, by=by)
        given = {"email": email, "name": name, "phone": phone}
        changed = [field for field, value in given.items() if getattr(order, field) != value]
        if not changed:
            return order
        # Email and phone are kept as personal data (forgotten with the order's); a name only
        # as having changed.
        audited: dict = {
            field: [getattr(order, field), given[field]] for field in changed if field != "name"
        }
        if "name" in changed:
            audited["nameChanged"] = True
        for field in changed:
            setattr(order, field, given[field])
        order.mailbox = mailbox_of(order.email)
        order.save(update_fields=[*changed, "mailbox"])
        record(action=Action.CHANGED, obj=order, by=by, changes=audited)
    return order


def resend_confirmation(*, order_id: uuid.UUID, by) -> Order:
    """Send the confirmation email of a confirmed order again (a visitor lost it): its tickets
    are printed in it, so an order not paid has none to send (NotPaid)."""
    with transaction.atomic():
        order = order_to_change(order_id=order_id, by=by)
        refuse_unless_printable(order)
        if order.status != OrderStatus.CONFIRMED:
            raise OrderCancelled(_("Only a confirmed order's email is sent."))
        mail_confirmation(order=order)
        order.save(update_fields=EMAIL_FIELDS)
        # Staff send it, past the mailbox's daily limit too; it counts toward it all the same.
        count_email(order, kind=BuyerEmail.Kind.CONFIRMATION)
    return order


def pay_out_at_desk(*, order: Order, by) -> Decimal:
    """The refunds the desk pays back by hand (cash, the card terminal) are paid out now; what
    they come to."""
    by_hand = Q(payment__provider=DESK) | Q(payment__isnull=True)
    due = order.refunds.filter(
        by_hand, state__in=[RefundState.CREATED, RefundState.MANUAL], amount__gt=0
    )
    amount = due.aggregate(total=Sum("amount"))["total"] or Decimal("0")
    # Cash or the card terminal: how the desk took the money is how it hands it back.
    method = due.values_list("payment__info", flat=True).first() or ""
    refunds = list(due.values_list("pk", flat=True))
    due.update(
        state=RefundState.DONE,
        reference=f"paid out at the desk by {by.get_username()}"[:100],
        done_at=timezone.now(),
    )
    if amount:
        changes = {"amount": amount, "method": method, "refunds": refunds}
        record(action=Action.PAID_OUT, obj=order, by=by, changes=changes)
    return amount
