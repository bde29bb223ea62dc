"""A member's card: the signed token of its membership as a QR code, with the holder's name, the
type, the last valid day, the card's code and the museum's name, in the membership's language; as
a PNG (a phone's screen, the activation email) and as a PDF the size of a bank card (ID-1, to
print and keep in a wallet). Drawn once and kept (`MembershipCard`) until what it prints changes.

Only a membership that may have a card is drawn: `membership_card` asks
orders.selectors.refuse_unless_card_printable, as every face of the card does.

A gift's card, which the giver prints or hands over before the gift has a holder: the gift code
in words and as a QR code, what the membership gives and how to redeem it, on an A6 page in the
gift's language. Drawn on each request and not kept: it is printed once or twice in a gift's
life, and a gift's code is spent once redeemed (orders.selectors.
refuse_unless_gift_card_printable, which every face of it asks).
"""

import dataclasses
import hashlib
from io import BytesIO

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from PIL import Image, ImageDraw, ImageFont

from museum import i18n
from museum.text import one_line
from orders import tokens
from orders.drawing import FONTS, GREY, draw_qr, fitted, pdf_page, pdf_text, qr_image
from orders.models import Membership, MembershipCard
from orders.selectors import refuse_unless_card_printable, refuse_unless_gift_card_printable

# What the kept cards were drawn by: change it with the layout below, and each card is drawn
# again on its next request.
LAYOUT = "1"
# ID-1, the size of a bank card, landscape.
CARD_MM = (85.6, 54.0)
MARGIN_MM = 4
QR_MM = 36  # modules of about 0.7 mm: read from the printed card and from a photo of it
# The PNG: the card at 300 dots an inch.
CARD_PIXELS = (1011, 638)
MARGIN_PIXELS = 40
QR_BOX_PIXELS = 9
# A gift's card: A6, portrait, to print at home or at the desk and put in an envelope.
GIFT_MM = (105.0, 148.0)
GIFT_MARGIN_MM = 10
GIFT_QR_MM = 40  # the gift code's QR, modules of about 1.2 mm: the desk scans it from the paper


@dataclasses.dataclass(frozen=True)
class Face:
    """Everything the card prints, in its language: equal faces draw equal cards."""

    language: str
    museum: str
    holder: str
    type_name: str
    valid_until: str
    card_code: str
    # The key that signs its token: a new key draws the cards again, signed by it.
    key_id: str


def face_of(membership: Membership) -> Face:
    """The card's face in the active language (the caller speaks the membership's)."""
    valid_until = membership.valid_until
    return Face(
        language=i18n.current(),
        museum=one_line(settings.MUSEUM_NAME),
        holder=one_line(membership.holder_name),
        type_name=one_line(membership.membership_type.name),
        # The last day in words, under its label ("Valid until"), wrapped, never shortened.
        valid_until=i18n.day_in_words(valid_until) if valid_until else "",
        card_code=membership.card_code,
        key_id=tokens.signing_keys()[0].key_id.hex(),
    )


def etag_of(face: Face) -> str:
    """The version of the card this face draws (its layout included). The token is left out: it
    names the day it was drawn, and a card drawn yesterday still admits today."""
    return hashlib.sha256(repr((LAYOUT, face)).encode()).hexdigest()[:32]


# Kept: drawn once, drawn again when what it prints changes.


def membership_card(*, membership: Membership) -> MembershipCard:
    """The membership's card as kept, in its language; drawn and kept first if none is, or if
    what the kept one prints changed since (a renewal, another holder, a translation).
    NoMembershipCard for a membership that has none (refuse_unless_card_printable)."""
    refuse_unless_card_printable(membership)
    with i18n.speaking(membership.language):
        face = face_of(membership)
        etag = etag_of(face)
        kept = MembershipCard.objects.filter(membership=membership, etag=etag).first()
        if kept is not None:
            return kept
        token = tokens.sign_member_card(
            membership_id=membership.pk,
            issued_on=timezone.localdate(),
            secret=membership.card_secret,
        )
        # Drawn before the write, which locks only the card's own row: no slow work waits on a
        # lock, and nothing else locks a card (a change of the membership draws it on its next
        # request, as its version no longer matches).
        png, pdf = draw_png(face, token), draw_pdf(face, token)
    with transaction.atomic():
        # Two first requests at once both draw; the row keeps one.
        kept, _created = MembershipCard.objects.update_or_create(
            membership=membership, defaults={"png": png, "pdf": pdf, "etag": etag}
        )
    return kept


def card_png(membership: Membership) -> bytes:
    """The card as a PNG, for the activation email (after its order's commit)."""
    return bytes(membership_card(membership=membership).png)


def card_pdf(membership: Membership) -> bytes:
    """The card as a card-sized PDF, for the activation email (after its order's commit)."""
    return bytes(membership_card(membership=membership).pdf)


def filename(membership: Membership, extension: str) -> str:
    return f"{membership.card_code}.{extension}"


# The PNG.


def _font(size: int, *, bold: bool = False) -> ImageFont.FreeTypeFont:
    # The PDF's font: a holder's name in any script.
    return ImageFont.truetype(FONTS / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"), size)


def draw_png(face: Face, token: str) -> bytes:
    width, height = CARD_PIXELS
    canvas = Image.new("L", CARD_PIXELS, "white")
    draw = ImageDraw.Draw(canvas)
    room = width - 2 * MARGIN_PIXELS
    museum = _font(44, bold=True)
    draw.text((MARGIN_PIXELS, MARGIN_PIXELS), fitted(draw, face.museum, museum, room), 20, museum)
    code = qr_image(token, box_size=QR_BOX_PIXELS)
    top = height - MARGIN_PIXELS - code.height + 4 * QR_BOX_PIXELS  # its quiet zone is margin
    left = MARGIN_PIXELS - 4 * QR_BOX_PIXELS
    canvas.paste(code, (left, top))
    x = left + code.width
    room = width - MARGIN_PIXELS - x
    y = top + 4 * QR_BOX_PIXELS
    lines = (
        (face.holder, _font(38, bold=True), 20, 2),
        (face.type_name, _font(30), 20, 2),
        (_("Valid until"), _font(26), 90, 1),
        (face.valid_until, _font(30, bold=True), 20, 2),
        (face.card_code, _font(26), 90, 1),
    )
    for text, font, ink, most in lines:
        for line in _wrapped(draw, text, font, room, most=most):
            draw.text((x, y), line, ink, font)
            y += round(font.size) + 12
        y += 10
    out = BytesIO()
    canvas.save(out, format="PNG")
    return out.getvalue()


def _wrapped(draw: ImageDraw.ImageDraw, text: str, font, width: int, *, most: int) -> list[str]:
    """The text in lines that fit the width, at most `most` of them (the last one shortened)."""
    lines: list[str] = []
    for word in text.split():
        if lines and draw.textlength(f"{lines[-1]} {word}", font=font) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    if len(lines) > most:
        lines[most - 1 :] = [" ".join(lines[most - 1 :])]
    return [fitted(draw, line, font, width) for line in lines]


# The PDF.


def draw_pdf(face: Face, token: str) -> bytes:
    pdf = pdf_page(
        landscape=True,
        size_mm=(CARD_MM[1], CARD_MM[0]),
        margin=MARGIN_MM,
        title=_("Membership card %(code)s") % {"code": face.card_code},
        author=face.museum,
        language=face.language,
    )
    pdf_text(pdf, face.museum, size=10, bold=True, width=pdf.epw)
    # Its quiet zone (4 modules, about 2.7 mm) is the card's margin there.
    top, left = pdf.h - 1 - QR_MM, 1
    draw_qr(pdf, token, x=left, y=top, size=QR_MM)
    column = left + QR_MM
    pdf.set_left_margin(column)
    pdf.set_xy(column, top + 4)
    width = pdf.w - MARGIN_MM - column
    pdf_text(pdf, face.holder, size=10, bold=True, width=width)
    pdf.ln(1)
    pdf_text(pdf, face.type_name, size=8, width=width)
    pdf_text(pdf, _("Valid until"), size=7, colour=GREY, width=width)
    pdf_text(pdf, face.valid_until, size=8, bold=True, width=width)
    pdf.ln(1)
    pdf_text(pdf, face.card_code, size=7, colour=GREY, width=width)
    return bytes(pdf.output())


# A gift's card.


@dataclasses.dataclass(frozen=True)
class GiftFace:
    """Everything a gift's card prints, in its language."""

    language: str
    museum: str
    type_name: str
    validity: str
    admits: str
    gift_code: str


def gift_face_of(membership: Membership) -> GiftFace:
    """The gift card's face in the active language (the caller speaks the gift's)."""
    kind = membership.membership_type
    months, admits = kind.validity_months, kind.admits
    return GiftFace(
        language=i18n.current(),
        museum=one_line(settings.MUSEUM_NAME),
        type_name=one_line(kind.name),
        validity=ngettext(
            "Valid for %(months)d month from the day it is redeemed.",
            "Valid for %(months)d months from the day it is redeemed.",
            months,
        )
        % {"months": months},
        admits=ngettext(
            "Each visit admits %(admits)d person.", "Each visit admits %(admits)d people.", admits
        )
        % {"admits": admits},
        gift_code=membership.gift_code or "",
    )


def gift_card_pdf(membership: Membership) -> bytes:
    """The gift's card as an A6 PDF in the gift's language, drawn now: for the API, the desk and
    the purchase email (after its order's commit, never under a row lock). NoGiftCard for a
    membership that has none (refuse_unless_gift_card_printable)."""
    refuse_unless_gift_card_printable(membership)
    with i18n.speaking(membership.language):
        return draw_gift_pdf(gift_face_of(membership))


def gift_filename(membership: Membership) -> str:
    return f"{membership.gift_code}.pdf"


def draw_gift_pdf(face: GiftFace) -> bytes:
    pdf = pdf_page(
        landscape=False,
        size_mm=GIFT_MM,
        margin=GIFT_MARGIN_MM,
        title=_("Gift card %(code)s") % {"code": face.gift_code},
        author=face.museum,
        language=face.language,
    )
    width = pdf.epw
    pdf_text(pdf, face.museum, size=12, bold=True, width=width, align="C")
    pdf.ln(4)
    pdf_text(pdf, _("Gift membership"), size=20, bold=True, width=width, align="C")
    pdf.ln(2)
    pdf_text(pdf, face.type_name, size=14, width=width, align="C")
    pdf.ln(2)
    pdf_text(pdf, face.validity, size=9, colour=GREY, width=width, align="C")
    pdf_text(pdf, face.admits, size=9, colour=GREY, width=width, align="C")
    pdf.ln(4)
    pdf_text(pdf, _("Gift code"), size=9, colour=GREY, width=width, align="C")
    pdf_text(pdf, face.gift_code, size=18, bold=True, width=width, align="C")
    # The code again as a QR code above the last words: the desk scans it instead of typing it.
    # Smaller when a long type's name or translation leaves less room, never over the words.
    redeem_top = pdf.h - GIFT_MARGIN_MM - 14
    size = min(GIFT_QR_MM, redeem_top - 2 - pdf.get_y())
    draw_qr(pdf, face.gift_code, x=(pdf.w - size) / 2, y=redeem_top - 2 - size, size=size)
    pdf.set_xy(GIFT_MARGIN_MM, redeem_top)
    how = _(
        "Redeem it at the museum's front desk or on the museum's website: the membership is "
        "valid from that day."
    )
    pdf_text(pdf, how, size=8, colour=GREY, width=width, align="C")
    return bytes(pdf.output())
