"""Reads of tickets: each returns what was asked for or raises a problem (NotFound, a bad scan)."""

import datetime as dt
import uuid
from collections.abc import Collection
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db.models import BooleanField, Expression, ExpressionWrapper, Q
from modeltranslation.fields import TranslationFieldDescriptor
from modeltranslation.utils import build_localized_fieldname, get_language, resolution_order

from museum.cache import read
from museum.exceptions import MuseumProblem, NotFound
from museum.response_cache import now_and_on_commit
from orders import tokens
from orders.codes import read_code
from orders.models import Order, Ticket, TicketImage
from orders.selectors import refuse_unless_printable
from tickets.exceptions import ForgedTicket, UnknownCode, UnknownTicket
from tickets.images import ticket_image


@dataclass(frozen=True)
class DrawnImage:
    etag: str
    png: bytes
    buyer_id: int  # whom the access rule compares the viewer with


def viewable_ticket_image(*, ticket_id: uuid.UUID, viewer) -> DrawnImage:
    """The ticket's image if `viewer` may see it (drawn on first use); else 404, as for no ticket.

    A drawn image only changes by being deleted (a cancellation redraws it stamped CANCELLED),
    so it is kept in the shared cache with its buyer, the one thing the access rule needs, and
    dropped there when its row is deleted (`forget_drawn_image`). Only a paid order's ticket is
    drawn (refuse_unless_printable), and an order once paid stays printable, so a drawn image
    needs no second look at its order. The kept copy is read with the request's sign-in if that
    read `image_cache_reads` (museum.cache.read).
    """
    drawn = _drawn_image(ticket_id)
    if drawn is not None:
        _refuse_unless_viewable(viewer=viewer, buyer_id=drawn.buyer_id)
        return drawn
    ticket = viewable_ticket(ticket_id=ticket_id, viewer=viewer)
    image = ticket_image(ticket=ticket)
    drawn = DrawnImage(etag=image.etag, png=bytes(image.png), buyer_id=ticket.buyer_id)
    _keep(ticket_id, drawn)
    return drawn


def viewable_ticket(*, ticket_id: uuid.UUID, viewer) -> Ticket:
    """The ticket, if `viewer` may see it (else 404, as for no ticket) and its order's tickets
    may be shown (refuse_unless_printable: 409 not_paid): what its image, and each pass that
    carries its token, ask."""
    ticket = _ticket(ticket_id)
    _refuse_unless_viewable(viewer=viewer, buyer_id=ticket.buyer_id)
    refuse_unless_printable(ticket.order)
    return ticket


def printable_ticket(*, ticket_id: uuid.UUID) -> Ticket:
    """The ticket if its order's tickets may be shown (refuse_unless_printable), whoever asks:
    for a face that was handed the ticket by a signed link (the wallet's), which grants what
    the emailed PDF does. NotFound for no ticket."""
    ticket = _ticket(ticket_id)
    refuse_unless_printable(ticket.order)
    return ticket


def _ticket(ticket_id: uuid.UUID) -> Ticket:
    # With its image, so that drawing it does not look for the image again, and its order, whose
    # language the drawing speaks.
    ticket = (
        Ticket.objects.select_related("event", "image", "category", "slot", "order")
        .filter(pk=ticket_id)
        .first()
    )
    if ticket is None:
        raise NotFound()
    return ticket


def _refuse_unless_viewable(*, viewer, buyer_id: int) -> None:
    # A ticket the viewer may not see is answered as if it did not exist.
    if not may_view_ticket(viewer=viewer, buyer_id=buyer_id):
        raise NotFound()


def _drawn_image(ticket_id: uuid.UUID) -> DrawnImage | None:
    if _seconds_kept() > 0 and (drawn := read(drawn_image_key(ticket_id))) is not None:
        return drawn
    row = (
        TicketImage.objects.filter(pk=ticket_id)
        .values_list("etag", "png", "ticket__buyer_id")
        .first()
    )
    if row is None:
        return None
    etag, png, buyer_id = row
    drawn = DrawnImage(etag=etag, png=bytes(png), buyer_id=buyer_id)
    _keep(ticket_id, drawn)
    return drawn


def drawn_image_key(ticket_id: uuid.UUID | str) -> str:
    return f"museum:drawn-image:{ticket_id}"


def image_cache_reads(ticket_id: uuid.UUID | str) -> list[str]:
    """What `viewable_ticket_image` reads from the cache first, for a sign-in to read early."""
    return [drawn_image_key(ticket_id)] if _seconds_kept() > 0 else []


def _seconds_kept() -> int:
    # As long as cached responses: what bounds how long a row changed by hand goes unseen.
    return settings.MUSEUM_RESPONSE_CACHE_SECONDS


def _keep(ticket_id: uuid.UUID, drawn: DrawnImage) -> None:
    if _seconds_kept() > 0:
        cache.set(drawn_image_key(ticket_id), drawn, _seconds_kept())


def forget_drawn_image(*, ticket_id: uuid.UUID) -> None:
    """Drop the cached copy of a deleted image, as a cache group gets a new version."""
    key = drawn_image_key(ticket_id)

    def drop() -> None:
        cache.delete(key)

    now_and_on_commit(drop)


VIEW_ANY_TICKET = "orders.view_ticket"


def may_view_ticket(*, viewer, buyer_id: int) -> bool:
    """Its buyer sees a ticket; so does an account that may view any ticket (staff)."""
    # The buyer first: the common case then costs no permission query.
    return viewer.pk == buyer_id or viewer.has_perm(VIEW_ANY_TICKET)


# What check_in and the door page read, and no more: the door's one read per scan loads neither
# the ticket's buyer details nor the event's description and prices.
DOOR_FIELDS = (
    "id",
    "ticket_type",
    "date",
    "confirmation_code",
    "cancelled_at",
    "checked_in_at",
    "held",
    "event__name",
    "slot__entry_time",
    "category__category",
    "category__name",
    "category__check_at_door",
)


def door_fields() -> list[str]:
    """DOOR_FIELDS, each translated name as the active language reads it: its columns in that
    language and those it falls back to (django-modeltranslation's descriptor reads them, not the
    name's own column), loaded with the ticket rather than by one query each when shown."""
    fields = []
    for lookup in DOOR_FIELDS:
        relation, _, column = lookup.rpartition("__")
        model = Ticket._meta.get_field(relation).related_model if relation else Ticket
        fields += [f"{relation}__{name}" if relation else name for name in _read(model, column)]
    return fields


def _read(model, column: str) -> list[str]:
    """The columns that reading `column` of a `model` instance reads."""
    descriptor = vars(model).get(column)
    if not isinstance(descriptor, TranslationFieldDescriptor):
        return [column]
    order = resolution_order(get_language(), descriptor.fallback_languages)
    return [build_localized_fieldname(column, each) for each in order]


@dataclass(frozen=True)
class Scan:
    """What a scanned text names: one ticket, by a signed token's ticket id (and date) or by its
    confirmation code, or the tickets of one order by the order's code. A code read without its
    prefix names a ticket of either type or an order: all are asked for at once (codes are
    random, so no two share what follows their prefixes)."""

    ticket_id: uuid.UUID | None = None
    date: dt.date | None = None  # a token's: the day it admits on
    ticket_codes: tuple[str, ...] = ()
    order_code: str | None = None
    # An order already found (a member card's visit of the day): its tickets by its key, its
    # code for the answer.
    order_id: uuid.UUID | None = None

    @property
    def tickets(self) -> Q:
        """The scan's tickets, as a filter on Ticket (the admission names them in its own SQL,
        tickets.services._scanned)."""
        if self.ticket_id is not None:
            return Q(pk=self.ticket_id)
        if self.order_id is not None:
            return Q(order_id=self.order_id)
        found = Q(confirmation_code__in=self.ticket_codes) if self.ticket_codes else Q()
        if self.order_code is not None:
            order = Order.objects.filter(confirmation_code=self.order_code).values("pk")
            found |= Q(order__in=order)
        return found

    def names_one_ticket(self, codes) -> bool:
        """Whether the scan named a single ticket, given the codes of the tickets it found."""
        return self.order_code is None or any(code in self.ticket_codes for code in codes)

    def not_found(self) -> MuseumProblem:
        # A ticket's code or token keeps the reason clients know; anything else is unknown_code.
        return UnknownTicket() if self.order_code is None else UnknownCode()


def scan_key(scanned: str) -> Scan:
    """What the scanned text names, a code read forgivingly (orders.codes.read_code, as the
    desk's search reads it). A signed QR token (`MT1.`, case kept: it is base64) whose signature
    fails is ForgedTicket; text that is neither a token nor shaped like a code is UnknownCode."""
    text = scanned.strip()
    if text[: len(tokens.PREFIX)].upper() == tokens.PREFIX:
        try:
            claim = tokens.verify_ticket_token(text)
        except tokens.InvalidTicketToken:
            raise ForgedTicket() from None
        return Scan(ticket_id=claim.ticket_id, date=claim.date)
    code = read_code(text)
    # A member card's code names no ticket: a scan naming nothing would name every ticket.
    if code is None or not (code.ticket_codes or code.order_code):
        raise UnknownCode()
    return Scan(ticket_codes=code.ticket_codes, order_code=code.order_code)


def tickets_for_scan(
    scan: Scan,
    *,
    conditions: dict[str, Q | Expression] | None = None,
    excluding: Collection[uuid.UUID] = (),
) -> list[Ticket]:
    """The tickets `scan` names but those `excluding`, with what the door reads, and whether each
    of `conditions` (a name: a Q or a boolean expression on Ticket) holds, as an attribute of that
    name; all in one SELECT. Ordered by their codes, as the door lists an order's tickets."""
    holds = {
        name: ExpressionWrapper(condition, output_field=BooleanField())
        for name, condition in (conditions or {}).items()
    }
    tickets = (
        Ticket.objects.select_related("event", "slot", "category")
        .only(*door_fields())
        .annotate(**holds)
        .filter(scan.tickets)
        .exclude(pk__in=excluding)
        .order_by("confirmation_code")
    )
    return list(tickets)
