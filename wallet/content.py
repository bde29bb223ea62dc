"""What a wallet pass shows, whoever draws it: one `PassContent` per pass, in its order's (its
membership's, its gift card's) language, which Apple's .pkpass (wallet/apple.py) and Google's
pass object each put in their own shape. The words are those the paper already prints: a
ticket's PDF and image (orders/documents.py, tickets/images.py), a member's card
(orders/membership_cards.py), a gift card's PDF (giftcards/cards.py), so a pass never says
something the paper does not. Whether a card's pass is voided is the one answer its card has
(Membership.validity_on, GiftCard.status_on and balance), never a rule of its own here."""

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action, AuditRecord
from giftcards.models import GiftCard, GiftCardStatus
from hours.models import MuseumDay
from museum import i18n
from museum.i18n import day_in_words, time_in_words
from museum.text import one_line
from orders import tokens
from orders.documents import conditions, event_times, opening_hours
from orders.models import Membership, Order, Ticket, Validity


@dataclass(frozen=True)
class Field:
    """One labelled value of a pass; `key` is stable across languages and rebuilds."""

    key: str
    label: str
    value: str


@dataclass(frozen=True)
class PassContent:
    """Everything a pass shows, and when it last changed."""

    kind: str
    serial: str
    language: str
    organization: str
    title: str
    barcode: str
    relevant_at: datetime | None
    expires_at: datetime | None
    voided: bool
    front: tuple[Field, ...]
    back: tuple[Field, ...]
    updated_at: datetime


TICKET = "ticket"
MEMBERSHIP = "membership"
GIFT_CARD = "giftcard"


def ticket_serial(ticket_id) -> str:
    """A ticket's pass's serial number: stable, so a rebuilt pass replaces the one in the wallet."""
    return f"{TICKET}-{ticket_id}"


def ticket_pass(ticket: Ticket) -> PassContent:
    """The ticket's pass, in its order's language (select_related order, event, slot, category
    saves their queries)."""
    order = ticket.order
    day = MuseumDay.objects.filter(date=ticket.date).first()
    with i18n.speaking(order.language):
        return PassContent(
            kind=TICKET,
            serial=ticket_serial(ticket.pk),
            language=i18n.current(),
            organization=one_line(settings.MUSEUM_NAME),
            title=one_line(ticket.event.name) if ticket.event else _("General entry"),
            barcode=tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date),
            relevant_at=_relevant_at(ticket, day),
            expires_at=_local(ticket.date + timedelta(days=1), time(0, 0)),
            voided=ticket.cancelled_at is not None,
            front=_front(ticket, day),
            back=_back(ticket, day),
            updated_at=_updated_at(ticket, order),
        )


def _local(day, at: time) -> datetime:
    # The museum's zone, so the offset is the one of that day (summer or winter time).
    return timezone.make_aware(datetime.combine(day, at), timezone.get_default_timezone())


def _relevant_at(ticket: Ticket, day: MuseumDay | None) -> datetime | None:
    """When the pass belongs on the lock screen: the slot's entry, an event's own start, or the
    day's opening; None when none is known (a day with no hours)."""
    if ticket.slot is not None:
        return _local(ticket.date, ticket.slot.entry_time)
    if ticket.event is not None and ticket.event.starts_at is not None:
        return _local(ticket.date, ticket.event.starts_at)
    if day is not None and not day.is_closed and day.opens_at is not None:
        return _local(ticket.date, day.opens_at)
    return None


def _front(ticket: Ticket, day: MuseumDay | None) -> tuple[Field, ...]:
    fields = [Field("date", _("Date"), day_in_words(ticket.date))]
    if ticket.slot is not None:
        entry = _("from %(time)s") % {"time": time_in_words(ticket.slot.entry_time)}
    elif ticket.event is not None and ticket.event.starts_at is not None:
        entry = _("from %(time)s") % {"time": time_in_words(ticket.event.starts_at)}
    else:
        entry = opening_hours(day)
    if entry:
        fields.append(Field("time", _("Entry"), entry))
    if ticket.category is not None:
        fields.append(Field("category", _("Category"), one_line(ticket.category.name)))
    fields.append(Field("code", _("Order"), ticket.order.confirmation_code))
    return tuple(fields)


def _back(ticket: Ticket, day: MuseumDay | None) -> tuple[Field, ...]:
    fields = []
    # As the PDF's page puts it: the event's own times where it has them, else the day's hours.
    when = day_in_words(ticket.date)
    if times := event_times(ticket.event):
        fields.append(
            Field(
                "hours",
                _("Opening hours"),
                _("On %(day)s: %(times)s") % {"day": when, "times": times},
            )
        )
    elif hours := opening_hours(day):
        fields.append(
            Field(
                "hours",
                _("Opening hours"),
                _("Open on %(day)s: %(hours)s") % {"day": when, "hours": hours},
            )
        )
    fields.append(Field("rules", _("Conditions"), " ".join(conditions(ticket))))
    fields.append(Field("ticket", _("Ticket"), ticket.confirmation_code))
    if settings.MUSEUM_ADDRESS:
        fields.append(Field("address", _("Address"), one_line(settings.MUSEUM_ADDRESS)))
    return tuple(fields)


def _updated_at(ticket: Ticket, order: Order) -> datetime:
    """The last change the ticket's pass shows that the rows remember: its sale, its order's
    confirmation, a change of its order (a move to another slot or day is recorded as one), its
    cancellation. A change they do not remember (an event renamed) is caught by the pass's
    builder, which compares what it would show with what it showed."""
    changed = AuditRecord.objects.filter(
        object_type=Order._meta.label_lower, object_id=str(order.pk), action=Action.CHANGED
    ).aggregate(at=Max("at"))["at"]
    moments = [ticket.purchased_at, order.confirmed_at, ticket.cancelled_at, changed]
    return max(moment for moment in moments if moment is not None)


# A member's card.


def membership_serial(membership_id) -> str:
    return f"{MEMBERSHIP}-{membership_id}"


def membership_pass(membership: Membership) -> PassContent:
    """The member card's pass, in the membership's language: what its card prints (the holder's
    name, never the email; the type; the last valid day; the card's code) and, as its barcode,
    the token of the card as it is now, so a replaced card's pass stops admitting with it.
    Voided while the door refuses the card for good (cancelled, expired); a renewal makes it
    valid again. Whether the asker may have it is the caller's question."""
    with i18n.speaking(membership.language):
        valid_until = membership.valid_until
        front = [
            Field("holder", _("Member"), one_line(membership.holder_name)),
            Field("type", _("Membership"), one_line(membership.membership_type.name)),
        ]
        if valid_until is not None:
            front.append(Field("valid_until", _("Valid until"), day_in_words(valid_until)))
        front.append(Field("card", _("Code"), membership.card_code))
        ended = {Validity.CANCELLED, Validity.EXPIRED}
        return PassContent(
            kind=MEMBERSHIP,
            serial=membership_serial(membership.pk),
            language=i18n.current(),
            organization=one_line(settings.MUSEUM_NAME),
            title=one_line(membership.membership_type.name),
            barcode=tokens.sign_member_card(
                membership_id=membership.pk,
                issued_on=_card_issued_on(membership),
                secret=membership.card_secret,
            ),
            relevant_at=None,
            expires_at=_local(valid_until + timedelta(days=1), time(0, 0)) if valid_until else None,
            voided=membership.validity_on(timezone.localdate()) in ended,
            front=tuple(front),
            back=_address(),
            updated_at=_membership_updated_at(membership),
        )


def _card_issued_on(membership: Membership):
    """The day the card as it is now was issued: the last replacement's, else the membership's
    first. Fixed, unlike the printed card's (the day it was drawn), so the pass's barcode and
    with it the pass change only when the card does; the door reads no date from it."""
    replaced = membership.replaced_cards.aggregate(at=Max("replaced_at"))["at"]
    issued = replaced or membership.activated_at or membership.created_at
    return timezone.localdate(issued)


def _membership_updated_at(membership: Membership) -> datetime:
    """Its last change the rows remember: bought, activated, redeemed, cancelled, or changed (a
    renewal, a replaced card, another holder: each recorded as one)."""
    changed = AuditRecord.objects.filter(
        object_type=Membership._meta.label_lower,
        object_id=str(membership.pk),
        action=Action.CHANGED,
    ).aggregate(at=Max("at"))["at"]
    moments = [
        membership.created_at,
        membership.activated_at,
        membership.redeemed_at,
        membership.cancelled_at,
        changed,
    ]
    return max(moment for moment in moments if moment is not None)


# A gift card.


def gift_card_serial(card_id) -> str:
    return f"{GIFT_CARD}-{card_id}"


def gift_card_pass(card: GiftCard) -> PassContent:
    """The gift card's pass, in the card's language: its code as the barcode (what the desk
    scans or types today, as from its PDF), what it holds now (its ledger's balance) and the
    last day it may be spent. Voided once it can no longer pay: expired, or nothing left on it
    (spent, or taken back by staff); a refund credited back onto it makes it valid again."""
    with i18n.speaking(card.language):
        balance = card.balance()
        front = [Field("balance", _("Balance"), i18n.money(balance))]
        if card.expires_on is not None:
            front.append(Field("valid_until", _("Valid until"), day_in_words(card.expires_on)))
        status = card.status_on(timezone.localdate())
        return PassContent(
            kind=GIFT_CARD,
            serial=gift_card_serial(card.pk),
            language=i18n.current(),
            organization=one_line(settings.MUSEUM_NAME),
            title=_("Gift card"),
            barcode=card.code,
            relevant_at=None,
            expires_at=(
                _local(card.expires_on + timedelta(days=1), time(0, 0)) if card.expires_on else None
            ),
            voided=status != GiftCardStatus.ACTIVE or balance <= 0,
            front=tuple(front),
            back=(Field("code", _("Code"), card.code), *_address()),
            updated_at=_gift_card_updated_at(card),
        )


def _gift_card_updated_at(card: GiftCard) -> datetime:
    """Its last change the rows remember: bought, issued, or a move of its ledger."""
    moved = card.transactions.aggregate(at=Max("at"))["at"]
    moments = [card.created_at, card.issued_at, moved]
    return max(moment for moment in moments if moment is not None)


def _address() -> tuple[Field, ...]:
    if settings.MUSEUM_ADDRESS:
        return (Field("address", _("Address"), one_line(settings.MUSEUM_ADDRESS)),)
    return ()
