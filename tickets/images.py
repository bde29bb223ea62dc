"""Drawing a ticket: the signed QR code with what a person at the door needs to read, in its
order's language; drawn once and kept as its `TicketImage`."""

import hashlib
from io import BytesIO

from django.conf import settings
from django.utils.translation import gettext as _
from PIL import Image, ImageDraw, ImageFont

from museum import i18n
from museum.text import one_line
from orders import tokens
from orders.drawing import fitted, qr_image
from orders.models import Ticket, TicketImage

WIDTH = 640
MARGIN = 32
QR_BOX_PIXELS = 10  # large modules scan reliably from a phone screen
INK, PAPER, RED = "#141414", "#ffffff", "#c81e1e"


def _lines(ticket: Ticket) -> list[tuple[str, int]]:
    what = ticket.event.name if ticket.event is not None else _("General entry")
    # Each is drawn as one line: a name stored with a line break (before names refused them)
    # would make Pillow refuse to measure it.
    if ticket.category is not None:
        what = f"{what} · {ticket.category.name}"
    when = i18n.day_in_words(ticket.date)
    if ticket.slot is not None:
        when = _("%(day)s, entry from %(time)s") % {
            "day": when,
            "time": i18n.time_in_words(ticket.slot.entry_time),
        }
    return [
        (one_line(settings.MUSEUM_NAME), 34),
        (one_line(what), 28),
        (when, 26),
        (ticket.confirmation_code, 26),
    ]


def render_ticket_png(*, ticket: Ticket, token: str) -> bytes:
    # Grey levels only, unless a red stamp goes on: a greyscale PNG saves in ~5 ms, RGB in ~12.
    mode = "RGB" if ticket.cancelled_at else "L"
    code = qr_image(token, box_size=QR_BOX_PIXELS, mode=mode)

    lines = _lines(ticket)
    text_height = sum(size + 14 for _, size in lines)
    canvas = Image.new(mode, (max(WIDTH, code.width), MARGIN + text_height + code.height), PAPER)
    draw = ImageDraw.Draw(canvas)
    y = MARGIN
    for text, size in lines:
        font = ImageFont.load_default(size=size)
        draw.text((MARGIN, y), fitted(draw, text, font, canvas.width - 2 * MARGIN), INK, font)
        y += size + 14
    canvas.paste(code, ((canvas.width - code.width) // 2, y))
    if ticket.cancelled_at:
        _stamp_cancelled(draw, canvas, top=y)

    out = BytesIO()
    # No optimize=True: it costs ~19 ms a ticket to save a few kilobytes.
    canvas.save(out, format="PNG")
    return out.getvalue()


def _stamp_cancelled(draw: ImageDraw.ImageDraw, canvas: Image.Image, *, top: int) -> None:
    # Across the code, so nobody mistakes a cancelled ticket for a valid one.
    word, size = _("CANCELLED"), 72
    font = ImageFont.load_default(size=size)
    # Smaller for a longer word (GEANNULEERD), so it stays on the canvas.
    while size > 24 and draw.textlength(word, font=font) > canvas.width - 2 * MARGIN:
        size -= 4
        font = ImageFont.load_default(size=size)
    box = draw.textbbox((0, 0), word, font=font)
    x = (canvas.width - (box[2] - box[0])) // 2
    y = top + (canvas.height - top - (box[3] - box[1])) // 2
    draw.rectangle((0, y - 10, canvas.width, y + box[3] - box[1] + 30), fill=PAPER)
    draw.text((x, y), word, RED, font)


def ticket_image(*, ticket: Ticket) -> TicketImage:
    """The ticket's PNG in its order's language, drawn on first use and kept."""
    try:
        return ticket.image
    except TicketImage.DoesNotExist:
        pass
    token = tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date)
    with i18n.speaking(ticket.order.language):
        png = render_ticket_png(ticket=ticket, token=token)
    # Two first fetches at once both draw; get_or_create keeps one.
    image, _ = TicketImage.objects.get_or_create(
        ticket=ticket, defaults={"png": png, "etag": hashlib.sha256(png).hexdigest()[:32]}
    )
    return image
