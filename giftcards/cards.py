"""A gift card as its buyer prints it or gives it: an A6 page in the card's language with the
museum's name, "Gift card", its value, its code in groups and as a QR code (the desk scans it
instead of typing it), until when it may be spent, and how. Drawn with the member cards' tools
(orders/drawing.py), and kept (`GiftCardPdf`): drawing one takes about 0.1 s, which the card's
email and each download would otherwise pay again, and nothing it prints changes once issued but
the museum's name or a translation (its `etag`, which draws it again).

Only an issued card is drawn: `refuse_unless_issued`, asked by the API and the email alike.
"""

import dataclasses
import hashlib

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from giftcards.exceptions import GiftCardNotIssued
from giftcards.models import GiftCard, GiftCardPdf
from museum import i18n
from museum.text import one_line
from orders.drawing import GREY, draw_qr, pdf_page, pdf_text

# What the kept cards were drawn by: change it with the layout below, and each card is drawn
# again on its next request.
LAYOUT = "1"
# A6, portrait, as a gift membership's card: printed at home or at the desk, put in an envelope.
PAGE_MM = (105.0, 148.0)
MARGIN_MM = 10
QR_MM = 40  # the code's QR, modules of about 1.6 mm: the desk scans it from paper or a phone


@dataclasses.dataclass(frozen=True)
class Face:
    """Everything the card prints, in its language: equal faces draw equal cards."""

    language: str
    museum: str
    value: str
    code: str
    valid_until: str


def refuse_unless_issued(card: GiftCard) -> None:
    """A card not issued yet (its order not paid) has no code to print: GiftCardNotIssued."""
    if card.issued_at is None or card.expires_on is None:
        raise GiftCardNotIssued()


def face_of(card: GiftCard) -> Face:
    """The card's face in the active language (the caller speaks the card's)."""
    assert card.expires_on is not None
    return Face(
        language=i18n.current(),
        museum=one_line(settings.MUSEUM_NAME),
        value=i18n.money(card.value),
        code=card.code,
        valid_until=i18n.day_in_words(card.expires_on),
    )


def etag_of(face: Face) -> str:
    return hashlib.sha256(repr((LAYOUT, face)).encode()).hexdigest()[:32]


def card_pdf(card: GiftCard) -> bytes:
    """The card as an A6 PDF in its language, as kept; drawn and kept first if none is, or if
    what the kept one prints changed since. GiftCardNotIssued for a card not issued yet."""
    refuse_unless_issued(card)
    with i18n.speaking(card.language):
        face = face_of(card)
        etag = etag_of(face)
        kept = GiftCardPdf.objects.filter(card=card, etag=etag).first()
        if kept is not None:
            return bytes(kept.pdf)
        # Drawn before the write, which locks only its own row: nothing waits on the drawing.
        pdf = draw_pdf(face)
    with transaction.atomic():
        # Two first requests at once both draw; the row keeps one.
        GiftCardPdf.objects.update_or_create(card=card, defaults={"pdf": pdf, "etag": etag})
    return pdf


def filename(card: GiftCard) -> str:
    # Its last group only, as every record names it: the whole code spends the card.
    return f"gift-card-{card.code[-4:]}.pdf"


def draw_pdf(face: Face) -> bytes:
    pdf = pdf_page(
        landscape=False,
        size_mm=PAGE_MM,
        margin=MARGIN_MM,
        title=_("Gift card"),
        author=face.museum,
        language=face.language,
    )
    width = pdf.epw
    pdf_text(pdf, face.museum, size=12, bold=True, width=width, align="C")
    pdf.ln(4)
    pdf_text(pdf, _("Gift card"), size=20, bold=True, width=width, align="C")
    pdf.ln(2)
    pdf_text(pdf, face.value, size=24, bold=True, width=width, align="C")
    pdf.ln(4)
    pdf_text(pdf, _("Code"), size=9, colour=GREY, width=width, align="C")
    pdf_text(pdf, face.code, size=16, bold=True, width=width, align="C")
    pdf.ln(1)
    pdf_text(pdf, _("Valid until"), size=9, colour=GREY, width=width, align="C")
    pdf_text(pdf, face.valid_until, size=11, width=width, align="C")
    # The code again as a QR code above the last words, never over the words above it.
    how_top = pdf.h - MARGIN_MM - 10
    size = min(QR_MM, how_top - 2 - pdf.get_y())
    draw_qr(pdf, face.code, x=(pdf.w - size) / 2, y=how_top - 2 - size, size=size)
    pdf.set_xy(MARGIN_MM, how_top)
    how = _("Pay with it at the museum's front desk or on its website, in one visit or several.")
    pdf_text(pdf, how, size=8, colour=GREY, width=width, align="C")
    return bytes(pdf.output())
