"""OCTO's webhooks (the `octo/webhooks` capability): a partner's subscriptions to
`booking_update` and `availability_update`, and the messages the audit log makes of them.

The webhooks app delivers them (signed, retried, to checked addresses) as it does its own types;
it lies below this app, so this app registers its types there (OctoConfig.ready) rather than
being imported by it. A subscription is an ordinary webhooks.Subscription of the partner's
account wanting one OCTO type, so it hears only of its own bookings, as the museum's webhooks
tell a partner only of its own orders. `availability_update` is coalesced per product and day,
its body read when it is sent, as `slot.availability_changed` is per slot.
"""

import uuid
from collections.abc import Iterator
from datetime import date

from audit.models import Action, AuditRecord
from hours.models import EntrySlot, MuseumDay
from museum.exceptions import InvalidInput, NotFound
from octo import catalogue
from octo.exceptions import BadRequest, OctoError
from octo.models import Booking
from octo.serializers import availability_out, booking_out
from orders.models import Order, Ticket
from webhooks.messages import Maker, Message, dumps, register
from webhooks.models import Subscription
from webhooks.services import create_subscription, delete_subscription

BOOKING_UPDATE = "booking_update"
AVAILABILITY_UPDATE = "availability_update"
EVENTS = [BOOKING_UPDATE, AVAILABILITY_UPDATE]

ORDER = Order._meta.label_lower
TICKET = Ticket._meta.label_lower
SLOT = EntrySlot._meta.label_lower
DAY = MuseumDay._meta.label_lower

# A booking's order changed in any way a reseller sees, or one of its tickets was admitted.
BOOKING_RECORDS = frozenset(
    [(ORDER, action) for action in Action if action not in (Action.DELETED, Action.PAID_OUT)]
    + [(TICKET, Action.CHECKED_IN)]
)
# Places taken or given back, a slot's capacity, a day's hours.
AVAILABILITY_RECORDS = frozenset(
    [(ORDER, action) for action in (Action.CREATED, Action.CANCELLED, Action.EXPIRED)]
    + [(SLOT, action) for action in (Action.CREATED, Action.CHANGED, Action.DELETED)]
    + [(DAY, action) for action in (Action.CREATED, Action.CHANGED)]
)


def booking_messages(entry: AuditRecord) -> Iterator[Message]:
    """The booking's `booking_update`, its body as `GET /octo/bookings/{uuid}` answers it."""
    order_id: uuid.UUID | str = entry.object_id
    if entry.object_type == TICKET:
        ticket = Ticket.objects.filter(pk=entry.object_id).values("order_id").first()
        if ticket is None:
            return
        order_id = ticket["order_id"]
    booking = Booking.objects.select_related("order").filter(order_id=order_id).first()
    if booking is None:  # not an OCTO booking's order, or one it no longer is
        return
    body = booking_out(booking, request=None, commission=None)
    yield Message(
        BOOKING_UPDATE, dumps({"event": BOOKING_UPDATE, "booking": body}), order=booking.order
    )


def availability_messages(entry: AuditRecord) -> Iterator[Message]:
    """The product's day whose places changed, as a subject: "general 2026-12-07"."""
    day: object
    if entry.object_type == ORDER:
        order = Order.objects.filter(pk=entry.object_id).values("event_id", "date").first()
        if order is None:
            return
        product = catalogue.GENERAL if order["event_id"] is None else str(order["event_id"])
        day = order["date"]
    elif entry.object_type == SLOT:
        slot = EntrySlot.objects.filter(pk=entry.object_id).values("day_id").first()
        day = slot["day_id"] if slot else entry.changes.get("day")
        if day is None:
            return
        product = catalogue.GENERAL
    else:
        product, day = catalogue.GENERAL, entry.object_id
    yield Message(AVAILABILITY_UPDATE, "", subject=f"{product} {day}")


def availability_body(subject: str) -> str:
    """The product's availabilities that day as `POST /octo/availability` answers them (none if
    the day closed, or the event is gone)."""
    product_id, day = subject.split(" ")
    on = date.fromisoformat(day)
    try:
        item = catalogue.product(product_id)
        slots = catalogue.availabilities(item, first=on, last=on)
    except OctoError:
        item, slots = None, []
    data = {
        "event": AVAILABILITY_UPDATE,
        "productId": product_id,
        "optionId": catalogue.OPTION,
        "localDate": day,
        "availabilities": [
            availability_out(slot, item, commission=None) for slot in slots if item is not None
        ],
    }
    return dumps(data)


def register_webhooks() -> None:
    register(Maker(BOOKING_UPDATE, BOOKING_RECORDS, booking_messages))
    register(
        Maker(AVAILABILITY_UPDATE, AVAILABILITY_RECORDS, availability_messages, availability_body)
    )


def event_of(subscription: Subscription) -> str | None:
    return next((event for event in subscription.event_types if event in EVENTS), None)


def create_webhook(*, partner, url, event) -> Subscription:
    """The partner's subscription to one OCTO event at `url` (checked as every receiver is)."""
    if event not in EVENTS:
        raise BadRequest(f"event must be one of {', '.join(EVENTS)}.")
    if not isinstance(url, str) or not url:
        raise BadRequest("url must be the receiver's https URL.")
    try:
        return create_subscription(owner=partner, url=url, event_types=[event])
    except InvalidInput as refusal:
        raise BadRequest(str(refusal.detail)) from None


def webhooks_of(*, partner) -> list[Subscription]:
    """The partner's subscriptions to OCTO events, oldest first."""
    return [s for s in Subscription.objects.filter(owner=partner) if event_of(s) is not None]


def delete_webhook(*, partner, webhook_id) -> None:
    try:
        subscription_id = uuid.UUID(str(webhook_id))
    except ValueError:
        raise NotFound() from None
    if not any(s.pk == subscription_id for s in webhooks_of(partner=partner)):
        raise NotFound()
    delete_subscription(subscription_id=subscription_id, owner=partner)
