"""Signed tokens: the text a ticket's QR code carries, a member card's, and the link to an order's
cancel page.

A ticket's token is `MT1.` followed by unpadded base64url of 88 bytes: a 24-byte payload (4-byte
key id, 16-byte ticket UUID, 4-byte big-endian proleptic ordinal of the ticket's date) and the
64-byte Ed25519 signature of that payload. A door scanner verifies it offline with the public keys
from GET /v1.1/tickets/signing-key, picking the key by its id.
"""

import base64
import binascii
import functools
import hashlib
import re
import struct
import uuid
from dataclasses import dataclass
from datetime import date

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.core import signing
from django.core.exceptions import ImproperlyConfigured
from django.utils.crypto import salted_hmac

PREFIX = "MT1."
_PAYLOAD = struct.Struct(">4s16sI")
_SIGNATURE_LENGTH = 64
_TOKEN_BYTES = _PAYLOAD.size + _SIGNATURE_LENGTH


class InvalidTicketToken(ValueError):
    """The text is not a token this museum signed."""


@dataclass(frozen=True)
class SigningKey:
    key_id: bytes
    private_key: Ed25519PrivateKey

    @property
    def public_bytes(self) -> bytes:
        return self.private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


@dataclass(frozen=True)
class TicketClaim:
    ticket_id: uuid.UUID
    date: date


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# Unpadded base64url of a token's bytes: 118 characters of the URL-safe alphabet.
_CANONICAL_BODY = re.compile(rf"[A-Za-z0-9_-]{{{len(_b64encode(bytes(_TOKEN_BYTES)))}}}")


@functools.lru_cache(maxsize=4)
def _keys_for(seeds: tuple[str, ...], secret_keys: tuple[str, ...]) -> tuple[SigningKey, ...]:
    if seeds:
        raw_seeds = [base64.urlsafe_b64decode(seed + "=" * (-len(seed) % 4)) for seed in seeds]
    else:
        # For local work only (a deploy check demands explicit seeds): derived from SECRET_KEY,
        # so every server sharing the configuration signs alike, and from SECRET_KEY_FALLBACKS,
        # so rotating the secret does not void the tickets already issued.
        raw_seeds = [
            salted_hmac(
                "museum.tickets.signing", "ed25519", secret=secret_key, algorithm="sha256"
            ).digest()
            for secret_key in secret_keys
        ]
    keys = []
    for seed in raw_seeds:
        if len(seed) != 32:
            raise ImproperlyConfigured(
                "MUSEUM_TICKET_SIGNING_KEYS: each seed is 32 bytes, base64url"
            )
        private_key = Ed25519PrivateKey.from_private_bytes(seed)
        public = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        keys.append(SigningKey(hashlib.sha256(public).digest()[:4], private_key))
    return tuple(keys)


def signing_keys() -> tuple[SigningKey, ...]:
    """The configured keys, newest first: the first signs, all of them verify."""
    return _keys_for(
        tuple(settings.MUSEUM_TICKET_SIGNING_KEYS),
        (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS),
    )


def sign_ticket(*, ticket_id: uuid.UUID, ticket_date: date) -> str:
    key = signing_keys()[0]
    payload = _PAYLOAD.pack(key.key_id, ticket_id.bytes, ticket_date.toordinal())
    return PREFIX + _b64encode(payload + key.private_key.sign(payload))


def _verified(
    token: str, *, prefix: str, signs_prefix: bool, bound: bytes = b""
) -> tuple[uuid.UUID, date]:
    """The id and date a token of `prefix` names, if this museum signed exactly this text (and,
    after it, `bound`, which the token does not carry).

    Only the canonical spelling is accepted (no padding, no `+/`, no other characters, unused
    bits zero): a scanner that remembers the tokens it admitted by their text is not fooled by
    another spelling of the same bytes.
    """
    payload, signature = _read(token, prefix=prefix)
    key_id, id_bytes, ordinal = _PAYLOAD.unpack(payload)
    key = next((key for key in signing_keys() if key.key_id == key_id), None)
    if key is None:
        raise InvalidTicketToken("signed with an unknown key")
    signed = (prefix.encode() + payload if signs_prefix else payload) + bound
    try:
        key.private_key.public_key().verify(signature, signed)
        return uuid.UUID(bytes=id_bytes), date.fromordinal(ordinal)
    except (InvalidSignature, ValueError):
        raise InvalidTicketToken("bad signature") from None


def _read(token: str, *, prefix: str) -> tuple[bytes, bytes]:
    """A token's payload and signature, unverified, if it is spelled canonically."""
    if not token.startswith(prefix):
        raise InvalidTicketToken(f"not a token starting {prefix}")
    body = token[len(prefix) :]
    if not _CANONICAL_BODY.fullmatch(body):
        raise InvalidTicketToken("not unpadded base64url of a token's length")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise InvalidTicketToken("not base64url") from None
    if _b64encode(raw) != body:
        raise InvalidTicketToken("not the canonical spelling")
    return raw[: _PAYLOAD.size], raw[_PAYLOAD.size :]


def verify_ticket_token(token: str) -> TicketClaim:
    """The ticket a token names, if this museum signed exactly this text (_verified)."""
    return TicketClaim(*_verified(token, prefix=PREFIX, signs_prefix=False))


# A member card's token: `MM1.` and the same 88 bytes as a ticket's, naming the membership and the
# day its card was drawn, signed by the same keys; the signature covers the prefix too, so no
# ticket's token is ever read as a card's or a card's as a ticket's.
MEMBER_CARD_PREFIX = "MM1."


@dataclass(frozen=True)
class MemberCardClaim:
    membership_id: uuid.UUID
    issued_on: date


def sign_member_card(*, membership_id: uuid.UUID, issued_on: date, secret: str = "") -> str:
    """The card's token; `secret`, the membership's card secret, is signed after its text (empty
    until a card is replaced: the signature is then the one the public key alone verifies)."""
    key = signing_keys()[0]
    payload = _PAYLOAD.pack(key.key_id, membership_id.bytes, issued_on.toordinal())
    signed = MEMBER_CARD_PREFIX.encode() + payload + secret.encode()
    return MEMBER_CARD_PREFIX + _b64encode(payload + key.private_key.sign(signed))


def verify_member_card_token(token: str, *, secret: str = "") -> MemberCardClaim:
    """The membership a card's token names, if this museum signed exactly this text with
    `secret`; as for tickets, InvalidTicketToken otherwise."""
    return MemberCardClaim(
        *_verified(token, prefix=MEMBER_CARD_PREFIX, signs_prefix=True, bound=secret.encode())
    )


def member_card_claim(token: str) -> uuid.UUID:
    """The membership a card's token claims to name, not verified yet: which card secret to
    verify it with (InvalidTicketToken if it is no card's token's spelling)."""
    payload, _signature = _read(token, prefix=MEMBER_CARD_PREFIX)
    return uuid.UUID(bytes=_PAYLOAD.unpack(payload)[1])


def public_keys() -> list[dict]:
    return [
        {
            "keyId": key.key_id.hex(),
            "algorithm": "Ed25519",
            "publicKey": _b64encode(key.public_bytes),
        }
        for key in signing_keys()
    ]


# The link of an order's cancel page (orders/pages/cancel.py), in its email and PDF: the order's
# id signed with Django's signing and a salt of its own, so a link opens that order's page and
# no other, and a ticket's token or a session cookie is never taken for one.
CANCEL_LINK_SALT = "museum.orders.cancel-link"
# The link of an order's tickets PDF without an account (orders/pages/tickets.py): what a reseller
# hands its customer. A salt of its own: it opens the PDF, never the cancel page.
TICKETS_LINK_SALT = "museum.orders.tickets-link"


# The link in a paid order's email to give to the museum's funds (orders/pages/donate.py): a
# salt of its own, so it opens neither the cancel page nor the tickets.
DONATE_LINK_SALT = "museum.orders.donate-link"


def sign_donate_link(*, order_id: uuid.UUID) -> str:
    return signing.Signer(salt=DONATE_LINK_SALT).sign(order_id.hex)


def order_of_donate_link(token: str) -> uuid.UUID | None:
    """The order a donate link's token names, or None if this museum did not sign it."""
    return _order_of(token, salt=DONATE_LINK_SALT)


def sign_cancel_link(*, order_id: uuid.UUID) -> str:
    return signing.Signer(salt=CANCEL_LINK_SALT).sign(order_id.hex)


def order_of_cancel_link(token: str) -> uuid.UUID | None:
    """The order a cancel link's token names, or None if this museum did not sign it."""
    return _order_of(token, salt=CANCEL_LINK_SALT)


def sign_tickets_link(*, order_id: uuid.UUID) -> str:
    return signing.Signer(salt=TICKETS_LINK_SALT).sign(order_id.hex)


def order_of_tickets_link(token: str) -> uuid.UUID | None:
    """The order a tickets link's token names, or None if this museum did not sign it."""
    return _order_of(token, salt=TICKETS_LINK_SALT)


def _order_of(token: str, *, salt: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(hex=signing.Signer(salt=salt).unsign(token))
    except (signing.BadSignature, ValueError):
        return None
