"""What an audit record tells integrators: the webhook messages it makes, and their bodies.

`publishNewEvent`'s body is the event as the events API answers it (its serializer): the
contract's SpecialEvent, as the Museum API 1.2 declares it, and our additions (capacity, times).
The other types are ours and carry the Standard Webhooks envelope, `{"type", "timestamp",
"data"}`: an order as `GET /v1.1/orders/{orderId}` answers it, a membership as
`GET /v1.1/memberships/{membershipId}` answers it (without a gift's code), a ticket checked in,
an event called off, a slot's places, a gift card's transaction (without the card's code), a
group's request as `GET /v1.1/group-requests/{requestId}` answers it.
"""

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, time
from decimal import Decimal

from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import OuterRef, Prefetch, Subquery, Sum
from django.utils import timezone

from audit.models import Action, AuditRecord
from events.models import EventDate, SpecialEvent
from events.serializers import PREFETCHED_DATES, SpecialEventResponseSerializer
from events.services import AUDITED
from giftcards.models import GiftCard, Transaction, TransactionKind
from giftcards.selectors import VIEW_ANY_GIFT_CARD
from giftcards.serializers import TransactionEventSerializer
from groups.models import GroupRequest, GroupStatus
from groups.selectors import may_answer, with_details
from groups.serializers import GroupRequestSerializer
from hours.models import EntrySlot
from hours.serializers import EntrySlotSerializer
from hours.services import slots_on_sale
from orders.models import Membership, Order, OrderStatus, Ticket, Voucher
from orders.selectors import VIEW_ANY_MEMBERSHIP, may_view_order, tickets_of
from orders.serializers import MembershipSerializer, OrderSerializer
from vouchers.serializers import VoucherRedeemedEventSerializer
from webhooks.models import EventType

# The audit log's names of the records' objects (audit.services: the model's label).
ORDER = Order._meta.label_lower
EVENT = SpecialEvent._meta.label_lower
TICKET = Ticket._meta.label_lower
SLOT = EntrySlot._meta.label_lower
MEMBERSHIP = Membership._meta.label_lower
GIFT_CARD = GiftCard._meta.label_lower
VOUCHER = Voucher._meta.label_lower
GROUP = GroupRequest._meta.label_lower

# The types each kind of record may make: records that make none are never read.
POSSIBLE: dict[tuple[str, str], set[str]] = {
    (EVENT, Action.CREATED): {EventType.PUBLISH_NEW_EVENT},
    (EVENT, Action.CHANGED): {EventType.PUBLISH_NEW_EVENT},
    (EVENT, Action.CANCELLED): {EventType.EVENT_CANCELLED},
    (ORDER, Action.CREATED): {EventType.ORDER_CONFIRMED, EventType.SLOT_AVAILABILITY_CHANGED},
    (ORDER, Action.CONFIRMED): {EventType.ORDER_CONFIRMED},
    (ORDER, Action.CANCELLED): {EventType.ORDER_CANCELLED, EventType.SLOT_AVAILABILITY_CHANGED},
    (ORDER, Action.EXPIRED): {EventType.ORDER_EXPIRED, EventType.SLOT_AVAILABILITY_CHANGED},
    (ORDER, Action.REFUNDED): {EventType.ORDER_REFUNDED},
    (TICKET, Action.CHECKED_IN): {EventType.TICKET_CHECKED_IN},
    (SLOT, Action.CREATED): {EventType.SLOT_AVAILABILITY_CHANGED},
    (SLOT, Action.CHANGED): {EventType.SLOT_AVAILABILITY_CHANGED},
    (MEMBERSHIP, Action.CONFIRMED): {EventType.MEMBERSHIP_ACTIVATED},
    (MEMBERSHIP, Action.CHANGED): {EventType.MEMBERSHIP_RENEWED},
    (MEMBERSHIP, Action.EXPIRED): {EventType.MEMBERSHIP_EXPIRED},
    (MEMBERSHIP, Action.CANCELLED): {EventType.MEMBERSHIP_CANCELLED},
    # giftcards.services._move: the card's first credit (created), then every other move.
    (GIFT_CARD, Action.CREATED): {EventType.GIFT_CARD_ISSUED, EventType.GIFT_CARD_TRANSACTION},
    (GIFT_CARD, Action.CHANGED): {EventType.GIFT_CARD_TRANSACTION},
    # orders.services.vouchers.record_redeemed: one a voucher an order confirmed used.
    (VOUCHER, Action.REDEEMED): {EventType.VOUCHER_REDEEMED},
    # groups.services: a request made, approved, moved or offered another time, its numbers
    # changed, declined, expired.
    (GROUP, Action.CREATED): {EventType.GROUP_REQUEST_CREATED},
    (GROUP, Action.CONFIRMED): {EventType.GROUP_REQUEST_APPROVED},
    (GROUP, Action.CHANGED): {EventType.GROUP_REQUEST_OFFERED, EventType.GROUP_REQUEST_CHANGED},
    (GROUP, Action.CANCELLED): {
        EventType.GROUP_REQUEST_DECLINED,
        EventType.GROUP_REQUEST_CANCELLED,
    },
    (GROUP, Action.EXPIRED): {EventType.GROUP_REQUEST_EXPIRED},
}


@dataclass(frozen=True)
class Message:
    event_type: str
    payload: str  # "" for a slot's availability or a coalesced message: read when it is sent
    # Only the subscriptions whose owner may see this order hear of it; None: everyone.
    order: Order | None = None
    slot_id: int | None = None
    # A coalesced message's subject (a registered type's, e.g. "general 2026-12-07"): one waits
    # per subject and subscription, and its body is read when it is sent.
    subject: str = ""
    # Only the subscriptions whose owner may see this membership hear of it.
    membership: Membership | None = None
    # Only the subscriptions whose owner bought this gift card, or may view any, hear of it.
    gift_card: GiftCard | None = None
    # Only the subscriptions whose owner asked for this group's visit, or answers groups' requests.
    group: GroupRequest | None = None

    def visible_to(self, owner) -> bool:
        if self.group is not None:
            return owner.pk == self.group.account_id or may_answer(owner)
        if self.gift_card is not None:
            return owner.pk == self.gift_card.buyer_id or owner.has_perm(VIEW_ANY_GIFT_CARD)
        if self.membership is not None:
            return owner.pk == self.membership.buyer_id or owner.has_perm(VIEW_ANY_MEMBERSHIP)
        return self.order is None or may_view_order(viewer=owner, order=self.order)


@dataclass(frozen=True)
class Maker:
    """A webhook type of an app above this one (OCTO's), registered from its AppConfig.ready so
    that this app delivers it without importing it: the records that may make it, the messages
    a record makes, and for a coalesced type the body of a subject when it is sent."""

    event_type: str
    records: frozenset[tuple[str, str]]
    make: Callable[[AuditRecord], Iterable[Message]]
    body_when_sent: Callable[[str], str] | None = None


MAKERS: dict[str, Maker] = {}


def register(maker: Maker) -> None:
    MAKERS[maker.event_type] = maker


def known_types() -> list[str]:
    """Every type a subscription may want: ours, then the registered ones."""
    return [*EventType.values, *MAKERS]


def possible_types(entry: AuditRecord) -> set[str]:
    key = (entry.object_type, entry.action)
    registered = {maker.event_type for maker in MAKERS.values() if key in maker.records}
    return POSSIBLE.get(key, set()) | registered


def body_when_sent(event_type: str, subject: str) -> str:
    maker = MAKERS[event_type]
    assert maker.body_when_sent is not None
    return maker.body_when_sent(subject)


def dumps(data) -> str:
    return json.dumps(data, cls=DjangoJSONEncoder, separators=(",", ":"), ensure_ascii=False)


def envelope(event_type: str, data) -> str:
    return dumps({"type": event_type, "timestamp": timezone.now(), "data": data})


def messages_of(entry: AuditRecord) -> Iterator[Message]:
    """The messages `entry` makes (what it names may be gone since: then none)."""
    make = _MESSAGES_OF.get(entry.object_type)
    if make is not None:
        yield from make(entry)
    key = (entry.object_type, entry.action)
    for maker in MAKERS.values():
        if key in maker.records:
            yield from maker.make(entry)


def _slot_messages(entry: AuditRecord) -> Iterator[Message]:
    yield Message(EventType.SLOT_AVAILABILITY_CHANGED, "", slot_id=int(entry.object_id))


def _ticket_messages(entry: AuditRecord) -> Iterator[Message]:
    ticket = Ticket.objects.select_related("order").filter(pk=entry.object_id).first()
    if ticket is not None and ticket.order is not None:
        yield Message(
            EventType.TICKET_CHECKED_IN,
            envelope(
                EventType.TICKET_CHECKED_IN,
                {
                    "ticketId": ticket.pk,
                    "orderId": ticket.order_id,
                    "confirmationCode": ticket.confirmation_code,
                    "ticketDate": ticket.date,
                    "checkedInAt": ticket.checked_in_at,
                },
            ),
            order=ticket.order,
        )


def _event_messages(entry: AuditRecord) -> Iterator[Message]:
    event = (
        SpecialEvent.objects.prefetch_related(
            Prefetch("dates", to_attr=PREFETCHED_DATES)  # type: ignore[arg-type]
        )
        .filter(pk=entry.object_id)
        .first()
    )
    if event is None:
        return
    if entry.action == Action.CREATED:
        event = _as_created(event, entry)
    body = SpecialEventResponseSerializer(event).data
    if entry.action == Action.CANCELLED:
        data = {**body, "cancelledAt": event.cancelled_at}
        yield Message(EventType.EVENT_CANCELLED, envelope(EventType.EVENT_CANCELLED, data))
    elif event.cancelled_at is None:
        yield Message(EventType.PUBLISH_NEW_EVENT, dumps(body))


def _as_created(event: SpecialEvent, entry: AuditRecord) -> SpecialEvent:
    """The event as it was made (its record keeps every field), whatever changed since: a
    receiver hears of the creation, then of each change. A change's message says the event as it
    is when the fan-out reads it, promptly after the change."""
    made = {name: entry.changes[name] for name in AUDITED if name in entry.changes}
    created = SpecialEvent(id=event.pk, **made)
    created.price = Decimal(str(created.price))
    for name in ("starts_at", "ends_at"):  # kept as "19:00:00"
        if isinstance(value := getattr(created, name), str):
            setattr(created, name, time.fromisoformat(value))
    days = [date.fromisoformat(day) for day in entry.changes.get("dates", [])]
    setattr(created, PREFETCHED_DATES, [EventDate(event=created, date=day) for day in days])
    return created


ORDER_TYPES: dict[str, str] = {
    Action.CONFIRMED: EventType.ORDER_CONFIRMED,
    Action.EXPIRED: EventType.ORDER_EXPIRED,
    Action.REFUNDED: EventType.ORDER_REFUNDED,
}


def _order_messages(entry: AuditRecord) -> Iterator[Message]:
    # Loaded as GET /v1.1/orders/{orderId} loads it (orders.selectors.viewable_order).
    order = Order.objects.select_related("slot", "event").filter(pk=entry.object_id).first()
    if order is None:
        return
    order.sold_tickets = list(tickets_of(order))
    event_type: str | None = ORDER_TYPES.get(entry.action)
    if entry.action == Action.CREATED and entry.changes.get("status") == OrderStatus.CONFIRMED:
        event_type = EventType.ORDER_CONFIRMED
    if entry.action == Action.CANCELLED and entry.changes.get("whole_order"):
        event_type = EventType.ORDER_CANCELLED
    if event_type is not None:
        body = envelope(event_type, OrderSerializer(order).data)
        yield Message(event_type, body, order=order)
    if order.slot_id is not None and entry.action != Action.REFUNDED:
        yield Message(EventType.SLOT_AVAILABILITY_CHANGED, "", slot_id=order.slot_id)


MEMBERSHIP_TYPES: dict[str, str] = {
    Action.CONFIRMED: EventType.MEMBERSHIP_ACTIVATED,
    Action.EXPIRED: EventType.MEMBERSHIP_EXPIRED,
    Action.CANCELLED: EventType.MEMBERSHIP_CANCELLED,
}


def _membership_messages(entry: AuditRecord) -> Iterator[Message]:
    event_type = MEMBERSHIP_TYPES.get(entry.action)
    if entry.action == Action.CHANGED and entry.changes.get("renewed"):
        event_type = EventType.MEMBERSHIP_RENEWED
    if event_type is None:
        return
    membership = (
        Membership.objects.select_related("membership_type")
        .prefetch_related("sales")
        .filter(pk=entry.object_id)
        .first()
    )
    if membership is not None:
        body = envelope(event_type, MembershipSerializer(membership).data)
        yield Message(event_type, body, membership=membership)


def _gift_card_messages(entry: AuditRecord) -> Iterator[Message]:
    """The record's transaction (`giftcard.transaction`), and for the first, `giftcard.issued`:
    the move with what the card held after it, in the ledger's order (each move is written
    under the card's lock)."""
    ledger_to_it = (
        Transaction.objects.filter(card=OuterRef("card"), pk__lte=OuterRef("pk"))
        .values("card")
        .annotate(total=Sum("amount"))
        .values("total")
    )
    move = (
        Transaction.objects.select_related("card")
        .annotate(balance_after=Subquery(ledger_to_it))
        .filter(pk=entry.changes.get("transaction"), card__pk=entry.object_id)
        .first()
    )
    if move is None:
        return
    data = TransactionEventSerializer(move).data
    types = [EventType.GIFT_CARD_TRANSACTION]
    if move.kind == TransactionKind.ISSUED:
        types.insert(0, EventType.GIFT_CARD_ISSUED)
    for event_type in types:
        yield Message(event_type, envelope(event_type, data), gift_card=move.card)


def _voucher_messages(entry: AuditRecord) -> Iterator[Message]:
    """`voucher.redeemed`, told from the record alone (the code as it was recorded), to those
    who may see the order that used it."""
    if entry.action != Action.REDEEMED:
        return
    order = Order.objects.filter(pk=entry.changes.get("order")).first()
    if order is None:
        return
    used = {
        "voucherId": int(entry.object_id),
        "code": entry.object_repr,
        "tag": entry.changes.get("tag", ""),
        "orderId": order.pk,
        "uses": entry.changes.get("uses", 0),
        "discount": Decimal(str(entry.changes.get("discount", "0"))),
    }
    data = VoucherRedeemedEventSerializer(used).data
    yield Message(
        EventType.VOUCHER_REDEEMED, envelope(EventType.VOUCHER_REDEEMED, data), order=order
    )


GROUP_TYPES: dict[str, str] = {
    Action.CREATED: EventType.GROUP_REQUEST_CREATED,
    Action.CONFIRMED: EventType.GROUP_REQUEST_APPROVED,
    Action.CHANGED: EventType.GROUP_REQUEST_CHANGED,
    Action.CANCELLED: EventType.GROUP_REQUEST_DECLINED,
    Action.EXPIRED: EventType.GROUP_REQUEST_EXPIRED,
}


def group_event_type(entry: AuditRecord) -> str | None:
    """The type a group request's record makes: a change to `offered` is an offer, any other a
    change; a cancellation is a decline (staff's answer) or the visit called off."""
    status = entry.changes.get("status")
    now = status[-1] if isinstance(status, list) and status else None
    if entry.action == Action.CHANGED and now == GroupStatus.OFFERED:
        return EventType.GROUP_REQUEST_OFFERED
    if entry.action == Action.CANCELLED and now == GroupStatus.CANCELLED:
        return EventType.GROUP_REQUEST_CANCELLED
    return GROUP_TYPES.get(entry.action)


def _group_messages(entry: AuditRecord) -> Iterator[Message]:
    """The request as `GET /v1.1/group-requests/{requestId}` answers it when the fan-out reads
    it, to those who asked for it and staff who answer requests."""
    event_type = group_event_type(entry)
    if event_type is None:
        return
    group = with_details(GroupRequest.objects.filter(pk=entry.object_id)).first()
    if group is not None:
        body = envelope(event_type, GroupRequestSerializer(group).data)
        yield Message(event_type, body, group=group)


# The messages each kind of record makes, by its object's type.
_MESSAGES_OF: dict[str, Callable[[AuditRecord], Iterator[Message]]] = {
    EVENT: _event_messages,
    ORDER: _order_messages,
    TICKET: _ticket_messages,
    SLOT: _slot_messages,
    MEMBERSHIP: _membership_messages,
    GIFT_CARD: _gift_card_messages,
    VOUCHER: _voucher_messages,
    GROUP: _group_messages,
}


def slot_payload(slot_id: int) -> str:
    """A slot's places now, as the slots list shows them, with its date."""
    slot = EntrySlot.objects.select_related("day").filter(pk=slot_id).first()
    if slot is None:
        return envelope(EventType.SLOT_AVAILABILITY_CHANGED, {"slotId": slot_id, "removed": True})
    slot.available, slot.over = 0, True  # a closed day's slots are not on sale
    on_sale = [] if slot.day.is_closed else slots_on_sale(day=slot.day)
    current = next((s for s in on_sale if s.pk == slot_id), slot)
    data = {"date": slot.day_id, **EntrySlotSerializer(current).data}
    return envelope(EventType.SLOT_AVAILABILITY_CHANGED, data)
