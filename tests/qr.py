from io import BytesIO

import zxingcpp
from PIL import Image


def qr_text(png: bytes) -> str:
    """The text of the one QR code in a ticket image, read by a real decoder."""
    [text] = qr_texts(png)
    return text


def qr_texts(png: bytes) -> set[str]:
    """The texts of the QR codes in an image (a PDF's page), read by a real decoder."""
    # QR codes only, and each text once: the decoder now and then reports one code twice, or a
    # linear barcode it thinks it sees in the printed text.
    codes = zxingcpp.read_barcodes(Image.open(BytesIO(png)), formats=zxingcpp.BarcodeFormat.QRCode)
    return {code.text for code in codes}
