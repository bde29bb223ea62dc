from io import BytesIO

import zxingcpp
from PIL import Image


def qr_text(png: bytes) -> str:
    """The text of the one QR code in a ticket image, read by a real decoder."""
    # QR codes only, and each text once: the decoder now and then reports one code twice, or a
    # linear barcode it thinks it sees in the printed text.
    codes = zxingcpp.read_barcodes(Image.open(BytesIO(png)), formats=zxingcpp.BarcodeFormat.QRCode)
    [text] = {code.text for code in codes}
    return text
