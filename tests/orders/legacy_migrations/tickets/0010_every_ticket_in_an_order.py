"""Every ticket belongs to an order: each ticket sold before orders existed (or through the
contract's purchase, which kept its own contact data and email) is wrapped in an order of one.

The order takes the ticket's buyer, email, phone, date, price (as its total), status (cancelled
or confirmed), purchase time and confirmation email state; its key is the ticket's key, which is
how the reverse finds the orders this made. An email still unsent is left to the order's email
task: its attempt is recorded under a result id that names no task, so the worker's periodic
`resend_lost_order_confirmations` enqueues it as a lost attempt. Reversed, the tickets get their
contact data back from their orders and the wrapped ones their email records (sent or not; the
attempts counted are not kept).
"""

import secrets
import uuid

from django.db import migrations
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

# tickets.services.CODE_ALPHABET as it was written: a migration keeps its own copy.
CODE_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
BATCH = 1000


def _order_code() -> str:
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(11))
    return f"order-{chars[:6]}-{chars[6:]}"


def _order_of(ticket, email):
    unsent = email is not None and email.sent_at is None and email.next_attempt_at is not None
    return {
        "id": ticket.id,
        "buyer_id": ticket.buyer_id,
        "email": ticket.email,
        "phone": ticket.phone,
        "status": "cancelled" if ticket.cancelled_at else "confirmed",
        "confirmation_code": _order_code(),
        "ticket_type": ticket.ticket_type,
        "date": ticket.date,
        "event_id": ticket.event_id,
        "slot_id": ticket.slot_id,
        "total": ticket.price,
        "confirmed_at": ticket.purchased_at,
        "cancelled_at": ticket.cancelled_at,
        "confirmation_sent_at": email.sent_at if email is not None else None,
        "confirmation_task_id": str(uuid.uuid4()) if unsent else "",
    }


def wrap_orderless_tickets(apps, schema_editor):
    Ticket = apps.get_model("tickets", "Ticket")
    Order = apps.get_model("orders", "Order")
    OutboxEmail = apps.get_model("tickets", "OutboxEmail")
    Ticket.objects.filter(order__status="held").update(held=True)
    while batch := list(Ticket.objects.filter(order__isnull=True).order_by("pk")[:BATCH]):
        emails = {e.ticket_id: e for e in OutboxEmail.objects.filter(ticket__in=batch)}
        Order.objects.bulk_create(Order(**_order_of(t, emails.get(t.pk))) for t in batch)
        Ticket.objects.filter(pk__in=[t.pk for t in batch]).update(order_id=F("pk"))
    # created_at is auto_now_add, which bulk_create fills with now: the purchase time instead.
    purchased = Ticket.objects.filter(pk=OuterRef("pk")).values("purchased_at")
    Order.objects.filter(tickets__pk=F("pk")).update(created_at=Subquery(purchased))


def unwrap_tickets(apps, schema_editor):
    Ticket = apps.get_model("tickets", "Ticket")
    Order = apps.get_model("orders", "Order")
    OutboxEmail = apps.get_model("tickets", "OutboxEmail")
    of_order = Order.objects.filter(pk=OuterRef("order_id"))
    Ticket.objects.update(
        email=Subquery(of_order.values("email")), phone=Subquery(of_order.values("phone"))
    )
    wrapped = Order.objects.filter(tickets__pk=F("pk"))
    now = timezone.now()
    OutboxEmail.objects.bulk_create(
        OutboxEmail(
            ticket_id=order.pk,
            sent_at=order.confirmation_sent_at,
            next_attempt_at=None if order.confirmation_sent_at else now,
        )
        for order in wrapped.filter(status="confirmed")
    )
    wrapped_ids = list(wrapped.values_list("pk", flat=True))
    Ticket.objects.filter(pk__in=wrapped_ids).update(order=None)
    Order.objects.filter(pk__in=wrapped_ids).delete()


class Migration(migrations.Migration):
    dependencies = [("tickets", "0009_ticket_held")]

    operations = [migrations.RunPython(wrap_orderless_tickets, unwrap_tickets)]
