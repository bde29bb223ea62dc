"""Reads of tickets: each returns what was asked for or raises a problem (NotFound, a bad scan)."""

import datetime as dt
import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL
from django.utils.translation import gettext as _

from museum.exceptions import MuseumProblem, NotFound
from museum.response_cache import now_and_on_commit
from orders import tokens
from orders.models import Ticket, TicketImage
from tickets.exceptions import ForgedTicket, NotPaid, UnknownCode, UnknownTicket
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
    dropped there when its row is deleted (`forget_drawn_image`).
    """
    drawn = _drawn_image(ticket_id)
    if drawn is not None:
        _refuse_unless_viewable(viewer=viewer, buyer_id=drawn.buyer_id)
        return drawn
    # With its image, so that drawing it does not look for the image again, and its order, whose
    # language the drawing speaks.
    ticket = (
        Ticket.objects.select_related("event", "image", "category", "slot", "order")
        .filter(pk=ticket_id)
        .first()
    )
    if ticket is None:
        raise NotFound()
    _refuse_unless_viewable(viewer=viewer, buyer_id=ticket.buyer_id)
    refuse_if_not_paid(held=ticket.held)
    image = ticket_image(ticket=ticket)
    drawn = DrawnImage(etag=image.etag, png=bytes(image.png), buyer_id=ticket.buyer_id)
    _keep(ticket_id, drawn)
    return drawn


def refuse_if_not_paid(*, held: bool) -> None:
    """A held order's tickets have no image, QR code or PDF until it is paid: one would pass for
    a ticket. (A drawn image is only ever a paid ticket's: a ticket is never held again.)"""
    if held:
        raise NotPaid(_("The order is not paid yet: its tickets come once it is."))


def _refuse_unless_viewable(*, viewer, buyer_id: int) -> None:
    # A ticket the viewer may not see is answered as if it did not exist.
    if not may_view_ticket(viewer=viewer, buyer_id=buyer_id):
        raise NotFound()


def _drawn_image(ticket_id: uuid.UUID) -> DrawnImage | None:
    if _seconds_kept() > 0 and (drawn := cache.get(drawn_image_key(ticket_id))) is not None:
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


# The prefixes of confirmation codes (tickets.services.new_confirmation_code): a ticket's, by its
# type, and an order's. The code after its prefix: 6 and 5 characters of Crockford's base32.
TICKET_CODE_PREFIXES = ("ticket-general-", "ticket-event-")
ORDER_CODE_PREFIX = "order-"
_CODE_BODY = re.compile(r"[0-9a-z]{6}-[0-9a-z]{5}")


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

    @property
    def tickets(self) -> Q:
        """The scan's tickets, as a filter on Ticket."""
        if self.ticket_id is not None:
            return Q(pk=self.ticket_id)
        found = Q(confirmation_code__in=self.ticket_codes) if self.ticket_codes else Q()
        if self.order_code is not None:
            # Through the ticket's own foreign key: the order is the layer above.
            found |= Q(order__confirmation_code=self.order_code)
        return found

    def names_one_ticket(self, codes) -> bool:
        """Whether the scan named a single ticket, given the codes of the tickets it found."""
        return self.order_code is None or any(code in self.ticket_codes for code in codes)

    def not_found(self) -> MuseumProblem:
        # A ticket's code or token keeps the reason clients know; anything else is unknown_code.
        return UnknownTicket() if self.order_code is None else UnknownCode()


def scan_key(scanned: str) -> Scan:
    """What the scanned text names, read forgivingly: surrounding spaces, any case and a code
    without its prefix are the code. A signed QR token (`MT1.`, case kept: it is base64) whose
    signature fails is ForgedTicket; text that is neither a token nor shaped like a code is
    UnknownCode."""
    text = scanned.strip()
    if text[: len(tokens.PREFIX)].upper() == tokens.PREFIX:
        try:
            claim = tokens.verify_ticket_token(text)
        except tokens.InvalidTicketToken:
            raise ForgedTicket() from None
        return Scan(ticket_id=claim.ticket_id, date=claim.date)
    code = text.lower()
    if code.startswith("ticket-"):  # any ticket's code, typed whole, as the door always took
        return Scan(ticket_codes=(code,))
    if code.startswith(ORDER_CODE_PREFIX):
        return Scan(order_code=code)
    if _CODE_BODY.fullmatch(code):
        return Scan(
            ticket_codes=tuple(prefix + code for prefix in TICKET_CODE_PREFIXES),
            order_code=ORDER_CODE_PREFIX + code,
        )
    raise UnknownCode()


def tickets_for_scan(
    scan: Scan,
    *,
    conditions: dict[str, tuple[str, list]] | None = None,
    excluding: Collection[uuid.UUID] = (),
) -> list[Ticket]:
    """The tickets `scan` names but those `excluding`, with what the door reads, and whether each
    of `conditions` (a name: SQL true or false on the ticket's row of tickets_ticket, and its
    parameters) holds, as an attribute of that name; all in one SELECT. Ordered by their codes,
    as the door lists an order's tickets."""
    holds = {
        # CASE, not the bare condition: a boolean column both SQLite and PostgreSQL can select.
        name: RawSQL(f"CASE WHEN {sql} THEN 1 ELSE 0 END", params, output_field=BooleanField())
        for name, (sql, params) in (conditions or {}).items()
    }
    tickets = (
        Ticket.objects.select_related("event", "slot", "category")
        .only(*DOOR_FIELDS)
        .annotate(**holds)
        .filter(scan.tickets)
        .exclude(pk__in=excluding)
        .order_by("confirmation_code")
    )
    return list(tickets)
