"""Drawing what a visitor shows at the door or the desk: a signed token's (or a code's) QR code,
on a PDF page as vector rectangles or as an image, text fitted to its room, and a card's page of
one PDF with its fonts and its wrapped text. Shared by the tickets' PDF (orders/documents.py), a
ticket's image (tickets/images.py), a member's card (orders/membership_cards.py) and a gift
card (giftcards/cards.py), so every code the door and the desk read is drawn alike."""

from pathlib import Path

import qrcode
from fpdf import FPDF
from PIL import Image, ImageDraw

# DejaVu Sans, kept beside these modules with its licence: real text in any language the museum
# writes in, and any name a visitor writes.
FONTS = Path(__file__).resolve().parent / "fonts"
INK, GREY = (20, 20, 20), (90, 90, 90)


def _qr(text: str, **options) -> qrcode.QRCode:
    # Medium error correction and the standard quiet zone of 4 modules: what the door's scanners
    # read from paper and from a phone's screen.
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, border=4, **options)
    code.add_data(text)
    code.make(fit=True)
    return code


def draw_qr(pdf: FPDF, text: str, *, x: float, y: float, size: float) -> None:
    """The text's QR code as filled rectangles, one per run of dark modules in a row: vector,
    so it prints sharp at any size and costs a few kilobytes."""
    matrix = _qr(text).get_matrix()  # quiet zone included
    module = size / len(matrix)
    pdf.set_fill_color(0, 0, 0)
    for row, modules in enumerate(matrix):
        column = 0
        while column < len(modules):
            if not modules[column]:
                column += 1
                continue
            start = column
            while column < len(modules) and modules[column]:
                column += 1
            pdf.rect(
                x + start * module, y + row * module, (column - start) * module, module, style="F"
            )


def qr_image(text: str, *, box_size: int, mode: str = "L") -> Image.Image:
    """The text's QR code as an image of `box_size` pixels a module, quiet zone included."""
    drawn = _qr(text, box_size=box_size).make_image(fill_color="black", back_color="white")
    return drawn.get_image().convert(mode)


def fitted(draw: ImageDraw.ImageDraw, text: str, font, width: int) -> str:
    """The text, shortened with an ellipsis until it fits the width."""
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def pdf_page(
    *,
    landscape: bool,
    size_mm: tuple[float, float],
    margin: float,
    title: str,
    author: str,
    language: str,
) -> FPDF:
    """A PDF of one page in `language`, its fonts added, nothing on it yet; the page's size is
    given short side first."""
    pdf = FPDF(orientation="landscape" if landscape else "portrait", unit="mm", format=size_mm)
    pdf.add_font("DejaVu", "", FONTS / "DejaVuSans.ttf")
    pdf.add_font("DejaVu", "B", FONTS / "DejaVuSans-Bold.ttf")
    pdf.set_title(title)
    pdf.set_author(author)
    pdf.set_lang(language)
    pdf.set_margins(margin, margin, margin)
    pdf.set_auto_page_break(False)
    pdf.add_page()
    return pdf


def pdf_text(
    pdf: FPDF,
    text: str,
    *,
    size: float,
    width: float,
    bold: bool = False,
    colour=INK,
    align: str = "L",
) -> None:
    if not text:
        return
    pdf.set_font("DejaVu", "B" if bold else "", size)
    pdf.set_text_color(*colour)
    # Wrapped, never cut: a long name takes two lines.
    pdf.multi_cell(width, size * 0.45, text, align=align, new_x="LMARGIN", new_y="NEXT")
