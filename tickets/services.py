"""The rules of selling tickets and letting their holders in."""

import hashlib
import logging
import re
import secrets
import uuid
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from rest_framework import status

from events.models import SpecialEvent
from museum.errors import MuseumProblem
from museum.text import one_line
from tickets import tokens
from tickets.images import render_ticket_png
from tickets.models import OutboxEmail, Ticket, TicketImage

logger = logging.getLogger(__name__)

VIEW_ANY_TICKET = "tickets.view_ticket"

# Crockford's lowercase base32: no i, l, o or u, so a code read aloud is not misheard.
CODE_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


class DateInPast(MuseumProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "date_in_past"
    title = "Date in the past"
    default_detail = "Tickets are sold from the museum's today onwards."


class MuseumClosed(MuseumProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "museum_closed"
    title = "Museum closed"
    default_detail = "The museum is not open on that date."


class EventNotOnDate(MuseumProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "event_not_on_date"
    title = "Event not on that date"
    default_detail = "The event does not run on that date."


class UnknownEvent(MuseumProblem):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "unknown_event"
    title = "Unknown event"
    default_detail = "There is no such event, or it was cancelled."


class SoldOut(MuseumProblem):
    status_code = status.HTTP_409_CONFLICT
    default_code = "sold_out"
    title = "Sold out"
    default_detail = "There are no places left on that date."


class ForgedTicket(MuseumProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "forged"
    title = "Not our ticket"
    default_detail = "The code is not a ticket signed by this museum."


class UnknownTicket(MuseumProblem):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "unknown_ticket"
    title = "Ticket not found"
    default_detail = "No ticket has that code."


class TicketRefused(MuseumProblem):
    """A real ticket refused at the door; the ticket rides along for the door page's summary."""

    def __init__(self, detail=None, *, ticket: Ticket | None = None, **extra):
        super().__init__(detail, **extra)
        # An attribute, not an extra: extras become members of the API's problem body.
        self.ticket = ticket


class TicketCancelled(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "cancelled"
    title = "Ticket cancelled"
    default_detail = "The ticket was cancelled."


class WrongDay(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "wrong_day"
    title = "Ticket for another day"
    default_detail = "The ticket is for another day."


class NotPaid(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "not_paid"
    title = "Ticket not paid"
    default_detail = "The ticket's order is held, not confirmed: it is not paid yet."


class TooEarly(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "too_early"
    title = "Too early"
    default_detail = "The ticket is for a later entry time."


class AlreadyCheckedIn(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "already_checked_in"
    title = "Ticket already used"
    default_detail = "The ticket was already used."


def new_confirmation_code(ticket_type: str) -> str:
    # 55 random bits: unguessable, and a collision (a unique-constraint error) is not a
    # practical worry at a museum's volumes.
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(11))
    return f"ticket-{ticket_type}-{chars[:6]}-{chars[6:]}"


def take_place(slot: QuerySet) -> bool:
    """Count one place sold on the slot's row (an event date, a museum day) if it has one left.

    One conditional UPDATE: the row lock it takes makes parallel buyers queue, and PostgreSQL
    re-checks the WHERE against the committed row, so sold never passes capacity (the
    CheckConstraint backs this up).
    """
    has_room = Q(capacity__isnull=True) | Q(sold__lt=F("capacity"))
    return slot.filter(has_room).update(sold=F("sold") + 1) == 1


def buy_ticket(
    *,
    buyer,
    ticket_type: str,
    ticket_date: date,
    email: str,
    event_id: uuid.UUID | None = None,
    phone: str = "",
) -> Ticket:
    """The contract's purchase: an order of one ticket (orders.services), mailed as a ticket."""
    # Imported here: orders builds on this module's tickets, codes and problems.
    from orders.services import sell_single_ticket

    order = sell_single_ticket(
        buyer=buyer,
        ticket_type=ticket_type,
        ticket_date=ticket_date,
        email=email,
        event_id=event_id,
        phone=phone,
    )
    return order.sold_tickets[0]


def may_view_ticket(*, viewer, buyer_id: int) -> bool:
    """Its buyer sees a ticket; so does an account that may view any ticket (staff)."""
    # The buyer first: the common case then costs no permission query.
    return viewer.pk == buyer_id or viewer.has_perm(VIEW_ANY_TICKET)


def ticket_image(*, ticket: Ticket) -> TicketImage:
    """The ticket's PNG, drawn on first use and kept."""
    try:
        return ticket.image
    except TicketImage.DoesNotExist:
        pass
    token = tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date)
    png = render_ticket_png(ticket=ticket, token=token)
    # Two first fetches at once both draw; get_or_create keeps one.
    image, _ = TicketImage.objects.get_or_create(
        ticket=ticket, defaults={"png": png, "etag": hashlib.sha256(png).hexdigest()[:32]}
    )
    return image


def send_confirmation(*, ticket_id: uuid.UUID) -> None:
    ticket = Ticket.objects.select_related("event", "image", "category", "slot").get(pk=ticket_id)
    # One line: a line break stored in a name (before names refused them) would make the
    # subject a header injection, which Django refuses on every attempt.
    what = one_line(ticket.event.name) if ticket.is_event_ticket else "general entry"
    message = EmailMessage(
        subject=f"Your ticket for {what} on {ticket.date:%d %B %Y}",
        body=(
            f"Thank you for your purchase.\n\nConfirmation code: {ticket.confirmation_code}\n"
            f"Date: {ticket.date:%A %d %B %Y}\nTicket: {what}\n\n"
            "Show the attached ticket at the door."
        ),
        to=[ticket.email],
    )
    image = ticket_image(ticket=ticket)
    message.attach(f"{ticket.confirmation_code}.png", bytes(image.png), "image/png")
    message.send()


# An address in a mail error's text: a mail server's refusal quotes the recipient (and the SMTP
# account is often an address too). Generous on purpose: a quoted local part, any non-space run
# around an @, a domain literal; better a word too many scrubbed than an address kept.
EMAIL_ADDRESS = re.compile(
    r"""(?:"[^"]*"|[^\s'"<>()\[\]{},;:]+)"""  # the local part: quoted, or a run of the rest
    r"""@(?:\[[^\]\s]*\]|[^\s'"<>()\[\]{},;:]+)"""  # the domain: a literal, or a run
)


def describe_mail_error(exc: Exception) -> str:
    """The class and message of a mail error, for the log, the email's row and its task result:
    without the SMTP password or any email address, which they would otherwise keep."""
    error = f"{type(exc).__name__}: {exc}"
    if settings.EMAIL_HOST_PASSWORD:
        error = error.replace(settings.EMAIL_HOST_PASSWORD, "********")
    return EMAIL_ADDRESS.sub("<address>", error)


# What an anonymised ticket keeps instead of its buyer's address: a valid address at a domain
# reserved never to exist (RFC 2606), so the row still passes the field's validation.
ANONYMISED_EMAIL = "anonymised@anonymised.invalid"
NEVER_SENT_NOTE = "Not sent; the address was removed with the buyer's personal data."


def anonymise_old_tickets(*, batch_size: int = 1000) -> int:
    """Replace the buyer's email and phone on tickets past the retention period; how many.

    Kept: the admission (date, type, event, price, confirmation code, check-in and by whom) and
    the buyer's account. Idempotent: an anonymised ticket no longer matches. A batch is a few
    statements, whatever its size, so the daily run stays short however many tickets are due.
    """
    days = settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS
    cutoff = timezone.localdate() - timedelta(days=days)
    due = (
        Ticket.objects.filter(date__lt=cutoff)
        .filter(~Q(email=ANONYMISED_EMAIL) | ~Q(phone=""))
        .order_by()
        .values_list("pk", flat=True)
    )
    anonymised = 0
    while batch := list(due[:batch_size]):
        with transaction.atomic():
            # A sent email keeps no error. One still unsent is dropped: its address is going. The
            # row lock this takes waits for a worker sending it, so the worker never reads the
            # placeholder as an address.
            OutboxEmail.objects.filter(ticket_id__in=batch, sent_at__isnull=True).update(
                next_attempt_at=None, last_error=NEVER_SENT_NOTE
            )
            anonymised += Ticket.objects.filter(pk__in=batch).update(
                email=ANONYMISED_EMAIL, phone=""
            )
    return anonymised


def cancel_tickets(*, event: SpecialEvent) -> int:
    """Cancel the event's tickets; they stay, so staff can still see who had bought one."""
    cancelled = Ticket.objects.filter(event=event, cancelled_at__isnull=True).update(
        cancelled_at=timezone.now()
    )
    # Redrawn on the next fetch, now stamped CANCELLED.
    TicketImage.objects.filter(ticket__event=event).delete()
    return cancelled


def _ticket_for_code(code: str) -> Ticket:
    """The ticket a scanned QR token names, or the confirmation code a visitor reads aloud."""
    # With what the door shows and checks: the event, the order (paid?), the slot, the category.
    tickets = Ticket.objects.select_related("event", "order", "slot", "category")
    if code.startswith("ticket-"):
        tickets = tickets.filter(confirmation_code=code)
    else:
        try:
            claim = tokens.verify_ticket_token(code)
        except tokens.InvalidTicketToken:
            raise ForgedTicket() from None
        tickets = tickets.filter(pk=claim.ticket_id, date=claim.date)
    try:
        return tickets.get()
    except Ticket.DoesNotExist:
        raise UnknownTicket() from None


def _check_entry_time(*, ticket: Ticket, entry_time: time, now: datetime) -> None:
    """A timed ticket is admitted from its entry time less the allowance, until the day ends."""
    allowance = timedelta(minutes=settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES)
    if now < timezone.make_aware(datetime.combine(ticket.date, entry_time)) - allowance:
        raise TooEarly(
            f"Entry from {entry_time:%H:%M}; the door lets its holders in "
            f"{settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES} minutes before.",
            ticket=ticket,
            entryTime=f"{entry_time:%H:%M}",
        )


def check_in(*, code: str, by) -> Ticket:
    """Admit the ticket's holder once, on the ticket's day."""
    ticket = _ticket_for_code(code.strip())
    if ticket.cancelled_at:
        raise TicketCancelled(ticket=ticket)
    if ticket.date != timezone.localdate():
        raise WrongDay(ticket=ticket, ticketDate=ticket.date.isoformat())
    # A held order only moves on to confirmed (admit) or to expired or cancelled, which set the
    # ticket's cancelled_at and so fail the claim below.
    if ticket.order is not None and ticket.order.status == "held":
        raise NotPaid(ticket=ticket)
    now = timezone.now()
    if ticket.slot is not None:
        _check_entry_time(ticket=ticket, entry_time=ticket.slot.entry_time, now=now)
    # Claim once: of two scanners reading the same ticket at once, one UPDATE finds the row
    # still unclaimed; the other changes nothing.
    unclaimed = Ticket.objects.filter(pk=ticket.pk, checked_in_at=None, cancelled_at=None)
    if not unclaimed.update(checked_in_at=now, checked_in_by=by):
        ticket.refresh_from_db(fields=["checked_in_at", "cancelled_at"])
        if ticket.cancelled_at:
            raise TicketCancelled(ticket=ticket)
        raise AlreadyCheckedIn(
            f"Already checked in at {timezone.localtime(ticket.checked_in_at):%H:%M}.",
            ticket=ticket,
            firstEntryAt=ticket.checked_in_at.isoformat(),
        )
    ticket.checked_in_at, ticket.checked_in_by = now, by
    return ticket
