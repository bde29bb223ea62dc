"""Apple Wallet: a ticket's, a member card's or a gift card's .pkpass (an event ticket, a store
card the other two), made from its `PassContent` (wallet/content.py) with
django_walletpass's PassBuilder and signed with the museum's pass certificate; kept as an
`ApplePass` beside the library's `Pass` (its serial number, its random authentication token, the
devices registered for it) and built again when what it shows has changed.

The labels are written in the order's language, as the values are (dates in words, the
conditions): `.lproj/pass.strings` would translate only the labels into the device's language
and leave the values in the order's, so one pass would speak two languages. The pass speaks its
order's language, as its PDF and email do.
"""

import functools
import hashlib
import json
import logging
from io import BytesIO
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django_walletpass.models import Pass
from django_walletpass.services import PassBuilder
from PIL import Image, ImageDraw, ImageFont

from giftcards.models import GiftCard
from orders.models import Membership, Ticket
from wallet import checks
from wallet.content import (
    GIFT_CARD,
    MEMBERSHIP,
    TICKET,
    PassContent,
    gift_card_pass,
    membership_pass,
    ticket_pass,
)
from wallet.exceptions import WalletNotConfigured, WalletUnavailable
from wallet.models import OWNERS_RELATED, ApplePass

logger = logging.getLogger("wallet.apple")

PKPASS = "application/vnd.apple.pkpass"
# What the kept passes were made by: change it with pass.json's shape or the images below, and
# each pass is built again on its next request.
LAYOUT = "1"
INK, PAPER, GREY = "rgb(20, 20, 20)", "rgb(255, 255, 255)", "rgb(90, 90, 90)"


def configured() -> bool:
    """Whether the museum has set up Apple Wallet: all five of its settings (docs/wallet.md)."""
    return not checks.apple_missing()


def refuse_unless_configured() -> None:
    if not configured():
        raise WalletNotConfigured()


# Each kind's pass style and where its front fields go: (style, primary, secondary, auxiliary).
# A ticket's primary field is its title; a card's, what the desk looks at first.
STYLES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    TICKET: ("eventTicket", (), ("date", "time"), ("category", "code")),
    MEMBERSHIP: ("storeCard", ("holder",), ("type", "valid_until"), ("card",)),
    GIFT_CARD: ("storeCard", ("balance",), ("valid_until",), ()),
}


def pass_json(content: PassContent) -> dict:
    """pass.json's own fields (the builder adds the pass type, team, serial number, token and
    web service URL): a ticket's an event ticket, a card's a store card, its barcode what the
    door or the desk reads."""
    style, primary, secondary, auxiliary = STYLES[content.kind]

    def fields(keys: tuple[str, ...]) -> list[dict]:
        return _fields(field for field in content.front if field.key in keys)

    data = {
        "formatVersion": 1,
        "organizationName": content.organization,
        "description": f"{content.organization}: {content.title}",
        "logoText": content.organization,
        "foregroundColor": INK,
        "backgroundColor": PAPER,
        "labelColor": GREY,
        "barcodes": [
            {
                "format": "PKBarcodeFormatQR",
                "message": content.barcode,
                "messageEncoding": "iso-8859-1",
            }
        ],
        "voided": content.voided,
        style: {
            "primaryFields": (
                fields(primary)
                if primary
                else [{"key": "title", "label": "", "value": content.title}]
            ),
            "secondaryFields": fields(secondary),
            "auxiliaryFields": fields(auxiliary),
            "backFields": _fields(content.back),
        },
    }
    if content.relevant_at is not None:
        # ISO 8601 with the museum's offset on that day, as Apple asks (W3C date and time).
        data["relevantDate"] = content.relevant_at.isoformat()
    if content.expires_at is not None:
        data["expirationDate"] = content.expires_at.isoformat()
    return data


def _fields(fields) -> list[dict]:
    return [{"key": field.key, "label": field.label, "value": field.value} for field in fields]


def fingerprint(data: dict) -> str:
    """What a kept pass was built from: its pass.json, the layout, the pass type and the
    certificate that signs it (a renewed certificate signs every pass again)."""
    path = Path(settings.MUSEUM_WALLET_APPLE_CERTIFICATE)
    made = json.dumps(
        [LAYOUT, settings.WALLETPASS.get("SERVICE_URL"), data], sort_keys=True, default=str
    )
    certificate = _certificate_digest(path, path.stat().st_mtime_ns)
    return hashlib.sha256(made.encode() + certificate).hexdigest()


@functools.lru_cache(maxsize=4)
def _certificate_digest(path: Path, modified: int) -> bytes:
    """The certificate's hash, read once per file and version of it (a renewed file has
    another modification time), not once per pass."""
    return hashlib.sha256(path.read_bytes()).digest()


@functools.lru_cache(maxsize=4)
def images(organization: str) -> dict[str, bytes]:
    """The pass's icon (lock screen, notifications) and logo, at Apple's sizes and twice them:
    the museum's initial, drawn here so no image is committed."""
    initial = (organization.strip()[:1] or "M").upper()
    sizes = {"icon.png": 29, "icon@2x.png": 58, "logo.png": 50, "logo@2x.png": 100}
    return {name: _initial_png(initial, size) for name, size in sizes.items()}


def _initial_png(initial: str, size: int) -> bytes:
    canvas = Image.new("RGB", (size, size), (20, 20, 20))
    draw = ImageDraw.Draw(canvas)
    font = ImageFont.load_default(size=int(size * 0.7))
    draw.text((size / 2, size / 2), initial, (255, 255, 255), font, anchor="mm")
    out = BytesIO()
    canvas.save(out, format="PNG")
    return out.getvalue()


def _build(*, content: PassContent, data: dict, token: str | None) -> tuple[bytes, str]:
    """The signed .pkpass and its authentication token (the library's random one for a new pass,
    else the pass's own, so the devices registered keep theirs)."""
    builder = PassBuilder()
    builder.pass_data = dict(data)
    builder.pass_data_required["serialNumber"] = content.serial
    if token is not None:
        builder.pass_data_required["authenticationToken"] = token
    for name, png in images(content.organization).items():
        builder.add_file(name, png)
    try:
        pkpass = builder.build()
    except (OSError, ValueError, TypeError) as exc:
        # The signing files were readable at the start (wallet.W001 says otherwise) but are not
        # now: a 503 the visitor may retry, and an error for whoever keeps the certificate.
        logger.error("Apple pass %s not signed: %s", content.serial, checks.apple_state())
        raise WalletUnavailable(
            _("Passes cannot be signed at the moment. Please try again later.")
        ) from exc
    return pkpass, builder.pass_data_required["authenticationToken"]


def _kept(serial: str) -> ApplePass | None:
    return (
        ApplePass.objects.select_related("pazz")
        .filter(
            pazz__pass_type_identifier=settings.MUSEUM_WALLET_APPLE_PASS_TYPE_ID,
            pazz__serial_number=serial,
        )
        .first()
    )


def ticket_apple_pass(*, ticket: Ticket) -> ApplePass:
    """The ticket's pass as it should be now (kept_pass). Whether the asker may have it is the
    caller's question."""
    return kept_pass(content=ticket_pass(ticket), ticket=ticket)


def membership_apple_pass(*, membership: Membership) -> ApplePass:
    """The member card's pass as it should be now (kept_pass); the caller asks whether the
    asker may have it and whether the membership has a card."""
    return kept_pass(content=membership_pass(membership), membership=membership)


def gift_card_apple_pass(*, card: GiftCard) -> ApplePass:
    """The gift card's pass as it should be now (kept_pass); the caller asks whether the asker
    may have it and whether the card is issued."""
    return kept_pass(content=gift_card_pass(card), gift_card=card)


def kept_pass(*, content: PassContent, **owner) -> ApplePass:
    """The pass of `content` as it should be now: the kept one, or one built afresh when what it
    shows changed (its `pazz.updated_at`, Apple's Last-Modified, moves then) or on first use,
    kept for `owner` (its ticket, membership or gift card)."""
    refuse_unless_configured()
    data = pass_json(content)
    made = fingerprint(data)
    kept = _kept(content.serial)
    if kept is not None and kept.fingerprint == made:
        return kept
    # Signed outside any transaction: nothing is locked while the certificate signs.
    pkpass, token = _build(
        content=content, data=data, token=kept.pazz.authentication_token if kept else None
    )
    if kept is not None:
        kept.pkpass, kept.fingerprint = pkpass, made
        with transaction.atomic():
            kept.save(update_fields=["pkpass", "fingerprint"])
            kept.pazz.save(update_fields=["updated_at"])  # auto_now: the moment it changed
        return kept
    try:
        with transaction.atomic():
            pazz = Pass.objects.create(
                pass_type_identifier=settings.MUSEUM_WALLET_APPLE_PASS_TYPE_ID,
                serial_number=content.serial,
                authentication_token=token,
            )
            return ApplePass.objects.create(pazz=pazz, fingerprint=made, pkpass=pkpass, **owner)
    except IntegrityError:
        # Two first requests at once: the pass (serial, type) is unique; the other's is kept.
        found = _kept(content.serial)
        if found is None:
            raise
        return found


def refreshed(pazz: Pass) -> ApplePass | None:
    """A pass of ours as it should be now, for Apple's web service (which has only the pass);
    None for a pass that is not one of ours."""
    kept = ApplePass.objects.select_related("pazz", *OWNERS_RELATED).filter(pazz=pazz).first()
    return None if kept is None else rebuilt(kept)


def rebuilt(kept: ApplePass) -> ApplePass:
    """The kept pass as it should be now, built whatever its owner's state (a cancelled
    membership's pass, voided), as a device already holds it."""
    return pass_of(kept.owner)


def pass_of(owner: Ticket | Membership | GiftCard) -> ApplePass:
    """The pass of a ticket, a member card or a gift card as it should be now (kept_pass);
    whether the asker may have it is the caller's question."""
    if isinstance(owner, Membership):
        return membership_apple_pass(membership=owner)
    if isinstance(owner, GiftCard):
        return gift_card_apple_pass(card=owner)
    return ticket_apple_pass(ticket=owner)
