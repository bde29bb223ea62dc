"""What the visitor holds: the order's tickets as a PDF to print at home, one ticket a page, with
real text and a vector QR code, made once and kept (`TicketsPdf`); and the wording that the PDF
and the confirmation email share. Both speak the order's language (`i18n.speaking`)."""

import dataclasses
import hashlib
from collections.abc import Sequence
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from fpdf import FPDF
from fpdf.enums import XPos, YPos

from events.models import SpecialEvent
from hours.models import MuseumDay
from museum import i18n
from museum.i18n import day_in_words, moment_in_words, money, time_in_words
from museum.text import one_line
from orders import tokens
from orders.drawing import FONTS, draw_qr
from orders.models import Channel, Fund, Order, OrderStatus, Ticket, TicketsPdf
from orders.providers import SELL_AT_DESK
from orders.selectors import cancel_deadline, line_order

# What the kept PDFs were made by: change it with the layout below, and each order's PDF is made
# again on its next request.
LAYOUT = "2"
# fpdf2's names for the paper sizes MUSEUM_PAPER_SIZE takes.
PAPER = {"a4": "A4", "letter": "Letter"}
MARGIN = 20  # mm
QR_SIZE = 70  # mm: modules of about 1.3 mm, crisp on paper and read from a phone's screen
ORDER_QR_SIZE = 45  # mm: the order's code is short, so its modules are as large in less room
INK, GREY, RED, PAPER_WHITE = (20, 20, 20), (90, 90, 90), (200, 30, 30), (255, 255, 255)


def what_of(order: Order) -> str:
    """What the order's tickets are for, on one line: the event's name, or general entry."""
    # One line: a name stored with a line break (before names refused them) stays on one.
    return one_line(order.event.name) if order.event else _("General entry")


def opening_hours(day: MuseumDay | None) -> str:
    if day is None or day.is_closed or day.opens_at is None or day.closes_at is None:
        return ""
    return f"{time_in_words(day.opens_at)}–{time_in_words(day.closes_at)}"


def event_times(event: SpecialEvent | None) -> str:
    """An event's own times on its dates ('19:00–22:00', 'from 19:00'); "" for an event that
    keeps the day's opening hours, or general entry."""
    if event is None or event.starts_at is None:
        return ""
    start = time_in_words(event.starts_at)
    if event.ends_at is None:
        return _("from %(time)s") % {"time": start}
    return f"{start}–{time_in_words(event.ends_at)}"


def museum_day(order: Order) -> MuseumDay | None:
    return MuseumDay.objects.filter(date=order.date).first()


@dataclasses.dataclass(frozen=True)
class Cancelling:
    """How the order's visitor may cancel its tickets now, as its email and PDF say it: until
    `deadline` (in words), at `link` (its cancel page) or as the museum's `instructions` say;
    `open` False once the deadline has passed (nothing is promised then)."""

    open: bool
    deadline: str
    link: str
    instructions: str


def cancelling(order: Order) -> Cancelling:
    deadline = cancel_deadline(order=order)
    instructions = one_line(settings.MUSEUM_CANCEL_INSTRUCTIONS)
    return Cancelling(
        open=order.status == OrderStatus.CONFIRMED and timezone.now() <= deadline,
        deadline=moment_in_words(deadline),
        link="" if instructions else cancel_link(order),
        instructions=instructions,
    )


def cancel_link(order: Order) -> str:
    """The order's cancel page (orders/pages/cancel.py), signed for that order alone."""
    token = tokens.sign_cancel_link(order_id=order.pk)
    return settings.MUSEUM_PUBLIC_URL + reverse("cancel-page", kwargs={"token": token})


def donate_link(order: Order) -> str:
    """The page where the visitor of a paid online order gives to the museum's funds
    (orders/pages/donate.py), signed for that order alone; "" while no fund takes gifts, or for
    an order not confirmed or not the visitor's own (a partner's, on account; the desk's)."""
    if order.status != OrderStatus.CONFIRMED or order.channel != Channel.ONLINE:
        return ""
    # A desk sale's buyer is the clerk who sold it: its visitor gives at the desk instead.
    if order.buyer.has_perm(SELL_AT_DESK):
        return ""
    if not Fund.objects.filter(active=True).exists():
        return ""
    token = tokens.sign_donate_link(order_id=order.pk)
    return settings.MUSEUM_PUBLIC_URL + reverse("donate-page", kwargs={"token": token})


# The PDF: what each page prints, then the pages drawn from it.


@dataclasses.dataclass(frozen=True)
class Sheet:
    """Everything one ticket's page prints, in its language: equal sheets make an equal PDF."""

    language: str
    museum: str
    address: tuple[str, ...]
    hours: str
    what: str
    category: str
    price: str
    day: str
    entry: str
    ticket_code: str
    order_code: str
    number: int
    of: int
    token: str
    cancelled: bool
    conditions: tuple[str, ...]
    # How to cancel it (a link, if any, makes the sentence a link).
    cancellation: str
    cancel_link: str
    # The first page's second QR code: the order's code, which admits every valid ticket of the
    # order at once at the door (a family in one scan); empty on the other pages.
    order_qr: str
    order_qr_caption: str


def printed_tickets(order: Order, *, valid_only: bool = False) -> list[Ticket]:
    """The order's tickets as its PDF prints them: the valid ones first, each kind as the order's
    lines list them (the visitor categories' order: adults first), the cancelled ones last."""
    tickets = order.tickets.select_related("event", "category", "slot")
    if valid_only:
        tickets = tickets.filter(cancelled_at__isnull=True)
    return sorted(tickets, key=lambda ticket: (ticket.cancelled_at is not None, line_order(ticket)))


def sheets(*, order: Order, tickets: Sequence[Ticket]) -> list[Sheet]:
    day = museum_day(order)
    hours = opening_hours(day)
    address = tuple(part.strip() for part in settings.MUSEUM_ADDRESS.split(",") if part.strip())
    terms = cancelling(order)
    opening = (
        _("Open on %(day)s: %(hours)s") % {"day": day_in_words(order.date), "hours": hours}
        if hours
        else ""
    )
    if times := event_times(order.event):
        opening = _("On %(day)s: %(times)s") % {"day": day_in_words(order.date), "times": times}
    valid = sum(1 for ticket in tickets if ticket.cancelled_at is None)
    # One code for the family: worth its room only where it admits more than one ticket.
    family = valid > 1
    return [
        Sheet(
            language=translation.get_language() or settings.LANGUAGE_CODE,
            museum=one_line(settings.MUSEUM_NAME),
            address=address,
            hours=opening,
            what=one_line(ticket.event.name) if ticket.event else _("General entry"),
            category=one_line(ticket.category.name) if ticket.category else "",
            price=money(ticket.price),
            day=day_in_words(ticket.date),
            entry=_entry(ticket, hours),
            ticket_code=ticket.confirmation_code,
            order_code=order.confirmation_code,
            number=number,
            of=len(tickets),
            token=tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date),
            cancelled=ticket.cancelled_at is not None,
            conditions=conditions(ticket),
            cancellation=_cancellation(ticket, terms),
            cancel_link=terms.link if terms.open and not ticket.cancelled_at else "",
            order_qr=order.confirmation_code if family and number == 1 else "",
            order_qr_caption=(
                ngettext(
                    "The whole order: %(count)s ticket",
                    "The whole order: %(count)s tickets",
                    valid,
                )
                % {"count": valid}
                if family and number == 1
                else ""
            ),
        )
        for number, ticket in enumerate(tickets, start=1)
    ]


def _entry(ticket: Ticket, hours: str) -> str:
    if ticket.slot is not None:
        return _("Entry from %(time)s") % {"time": time_in_words(ticket.slot.entry_time)}
    if ticket.event is not None and ticket.event.starts_at is not None:
        return _("Entry from %(time)s") % {"time": time_in_words(ticket.event.starts_at)}
    return _("Entry at any time during opening hours") if hours else ""


def conditions(ticket: Ticket) -> tuple[str, ...]:
    """What the ticket admits and how, as its page prints it (and its wallet pass's back)."""
    day = day_in_words(ticket.date)
    if ticket.slot is None:
        valid = _("Valid for one visitor, once, on %(day)s.") % {"day": day}
    else:
        early = settings.MUSEUM_ENTRY_ALLOWANCE_MINUTES
        words = {"day": day, "time": time_in_words(ticket.slot.entry_time), "minutes": early}
        valid = (
            _(
                "Valid for one visitor, once, on %(day)s, entry from %(time)s (the door lets "
                "you in up to %(minutes)s minutes before)."
            )
            if early
            else _("Valid for one visitor, once, on %(day)s, entry from %(time)s.")
        ) % words
    conditions = [
        valid
        + " "
        + _(
            "Show this page at the door, printed or on your phone: its QR code is checked "
            "there, and a copy lets nobody in a second time."
        ),
    ]
    if ticket.category is not None and ticket.category.check_at_door:
        conditions.append(
            _("%(category)s tickets: bring proof (age or status); the door asks for it.")
            % {"category": one_line(ticket.category.name)}
        )
    return tuple(conditions)


def _cancellation(ticket: Ticket, terms: Cancelling) -> str:
    """What the ticket's page says of cancelling it: nothing for a cancelled one, no promise
    once the deadline has passed, and money back only for a ticket that cost some."""
    if ticket.cancelled_at is not None:
        return ""
    if not terms.open:
        return _("Cancellation: this ticket can no longer be cancelled online.")
    words = {"deadline": terms.deadline, "link": terms.link, "how": terms.instructions}
    if terms.instructions:
        return _("Cancellation, until %(deadline)s: %(how)s") % words
    if ticket.price > Decimal("0"):
        return (
            _(
                "Cancellation: until %(deadline)s you can cancel this ticket at %(link)s and get "
                "its price back; after that only the museum can cancel it."
            )
            % words
        )
    return (
        _(
            "Cancellation: until %(deadline)s you can cancel this ticket at %(link)s; after that "
            "only the museum can cancel it."
        )
        % words
    )


def etag_of(pages: Sequence[Sheet]) -> str:
    """The version of the PDF these sheets make (its paper and layout included)."""
    printed = repr((LAYOUT, settings.MUSEUM_PAPER_SIZE, pages)).encode()
    return hashlib.sha256(printed).hexdigest()[:32]


def make_pdf(pages: Sequence[Sheet], *, title: str) -> bytes:
    pdf = FPDF(format=PAPER[settings.MUSEUM_PAPER_SIZE])
    # DejaVu Sans, kept beside this module with its licence: real, searchable text in any
    # language the museum writes in; only the glyphs used are embedded.
    pdf.add_font("DejaVu", "", FONTS / "DejaVuSans.ttf")
    pdf.add_font("DejaVu", "B", FONTS / "DejaVuSans-Bold.ttf")
    pdf.set_title(title)
    pdf.set_author(one_line(settings.MUSEUM_NAME))
    pdf.set_lang(pages[0].language if pages else settings.LANGUAGE_CODE)
    pdf.set_margins(MARGIN, MARGIN)
    pdf.set_auto_page_break(False)
    for page in pages:
        pdf.add_page()
        _draw(pdf, page)
    return bytes(pdf.output())


def _line(
    pdf: FPDF, text: str, *, size: float, bold: bool = False, colour=INK, link: str = ""
) -> None:
    if not text:
        return
    pdf.set_font("DejaVu", "B" if bold else "", size)
    pdf.set_text_color(*colour)
    # Wrapped, never cut: an event's name may be long.
    pdf.multi_cell(
        pdf.epw,
        size * 0.5,
        text,
        align="L",
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
        link=link or None,
    )


def _draw(pdf: FPDF, page: Sheet) -> None:
    _line(pdf, page.museum, size=20, bold=True)
    for part in page.address:
        _line(pdf, part, size=10, colour=GREY)
    _line(pdf, page.hours, size=10, colour=GREY)
    pdf.ln(3)
    pdf.set_draw_color(*GREY)
    pdf.line(MARGIN, pdf.get_y(), pdf.w - MARGIN, pdf.get_y())
    pdf.ln(5)
    _line(pdf, page.what, size=18, bold=True)
    _line(pdf, " · ".join(filter(None, (page.category, page.price))), size=14)
    pdf.ln(2)
    _line(pdf, page.day, size=14, bold=True)
    _line(pdf, page.entry, size=12)
    if page.cancelled:
        # In words as well as the stamp: read aloud by a screen reader, found by a search.
        _line(pdf, _("CANCELLED: this ticket is void and admits nobody."), size=12, colour=RED)
    pdf.ln(6)
    top, left = pdf.get_y(), (pdf.w - QR_SIZE) / 2
    if page.order_qr:
        # The ticket's code on the left, the order's beside it on the right.
        left = MARGIN + 5
        right = pdf.w - MARGIN - 5 - ORDER_QR_SIZE
        draw_qr(pdf, page.order_qr, x=right, y=top, size=ORDER_QR_SIZE)
        pdf.set_xy(right - 10, top + ORDER_QR_SIZE + 1)
        pdf.set_font("DejaVu", "", 9)
        pdf.set_text_color(*INK)
        pdf.multi_cell(ORDER_QR_SIZE + 20, 4.5, page.order_qr_caption, align="C")
    draw_qr(pdf, page.token, x=left, y=top, size=QR_SIZE)
    if page.cancelled:
        _stamp_cancelled(pdf, x=left, y=top)
    pdf.set_y(top + QR_SIZE + 4)
    _centred(pdf, page.ticket_code, size=11)
    numbered = _("Ticket %(number)s of %(count)s · Order %(code)s") % {
        "number": page.number,
        "count": page.of,
        "code": page.order_code,
    }
    _centred(pdf, numbered, size=11)
    pdf.ln(6)
    for condition in page.conditions:
        _line(pdf, condition, size=9, colour=GREY)
        pdf.ln(1)
    _line(pdf, page.cancellation, size=9, colour=GREY, link=page.cancel_link)


def _centred(pdf: FPDF, text: str, *, size: float) -> None:
    pdf.set_font("DejaVu", "", size)
    pdf.set_text_color(*INK)
    pdf.cell(pdf.epw, size * 0.5, text, align="C", new_x=XPos.LMARGIN, new_y=YPos.NEXT)


def _stamp_cancelled(pdf: FPDF, *, x: float, y: float) -> None:
    # Across the code, so nobody mistakes a cancelled ticket for a valid one.
    centre_x, centre_y = x + QR_SIZE / 2, y + QR_SIZE / 2
    with pdf.rotation(20, centre_x, centre_y):
        pdf.set_fill_color(*PAPER_WHITE)
        pdf.rect(x - 10, centre_y - 10, QR_SIZE + 20, 20, style="F")
        word, size = _("CANCELLED"), 36
        pdf.set_font("DejaVu", "B", size)
        # Smaller for a longer word (GEANNULEERD), so it stays on the band.
        while size > 12 and pdf.get_string_width(word) > QR_SIZE + 16:
            size -= 2
            pdf.set_font("DejaVu", "B", size)
        pdf.set_text_color(*RED)
        pdf.set_xy(x - 10, centre_y - 10)
        pdf.cell(QR_SIZE + 20, 20, word, align="C")


# Kept: made once, made again when what it prints changes.


def order_pdf(*, order: Order) -> TicketsPdf:
    """The order's tickets in its language, one a page (a cancelled one stamped CANCELLED), as
    kept; made and kept first if none is, or if what the kept one prints changed since (a
    cancellation, a move to another slot, the day's hours, a translation)."""
    with i18n.speaking(order.language):
        return _kept(order, list(printed_tickets(order)))


def _title(order: Order) -> str:
    return _("Tickets, order %(code)s") % {"code": order.confirmation_code}


def _kept(order: Order, tickets: list[Ticket]) -> TicketsPdf:
    # Its sheets hold the language and every word printed: another language is another PDF.
    pages = sheets(order=order, tickets=tickets)
    etag = etag_of(pages)
    kept = TicketsPdf.objects.filter(order=order, etag=etag).first()
    if kept is not None:
        return kept
    made = make_pdf(pages, title=_title(order))
    with transaction.atomic():
        # The order's row, then its kept PDF: the order in which every writer takes them
        # (hours/locking.py), so keeping a PDF never waits in a circle with a change of the order.
        _lock_order(order)
        # Two first requests at once both make it; the row keeps one.
        kept, _ = TicketsPdf.objects.update_or_create(
            order=order, defaults={"pdf": made, "etag": etag}
        )
    return kept


def valid_tickets_pdf(*, order: Order) -> bytes:
    """The order's valid tickets as a PDF in its language, for its email: the kept one when
    none is cancelled."""
    tickets = list(printed_tickets(order))
    valid = [ticket for ticket in tickets if ticket.cancelled_at is None]
    with i18n.speaking(order.language):
        if len(valid) == len(tickets):
            return bytes(_kept(order, tickets).pdf)
        # A ticket cancelled while the order was held: its buyer is sent only what they hold.
        return make_pdf(sheets(order=order, tickets=valid), title=_title(order))


def _lock_order(order: Order) -> None:
    # FOR NO KEY UPDATE: waits for a change of the order (a cancellation, an attempt's claim),
    # never for a ticket or payment being added to it.
    list(Order.objects.select_for_update(no_key=True).filter(pk=order.pk).values_list("pk"))


def forget_order_pdf(order: Order) -> None:
    """Drop the order's kept PDF: its next request makes it again. For a change the PDF would
    otherwise find only on its next request (its version follows what it prints anyway)."""
    with transaction.atomic():
        _lock_order(order)
        TicketsPdf.objects.filter(order=order).delete()
