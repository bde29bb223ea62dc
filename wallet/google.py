"""Google Wallet: a pass of a ticket, a member's card or a gift card as an object of Google's Wallet
API, and the save link ("Add to Google Wallet") that names it.

Each pass is written through the REST API first and the link's JWT names only its id (a
"skinny" JWT), so the link stays short (Google's limit for a URL is about 2,000 characters) and
the object can be updated later by the same API call: each object saved is kept as a
`GoogleObject`, and a change of its owner saves it again (update_object, from wallet/tasks.py).
google-auth signs both: the service account's credentials get the access token for the REST
calls, and its RSA signer signs the save link's JWT. Every kind takes the same path,
`save_pass`: its class ensured, its object inserted or replaced and kept, the link signed.

Google's pass types, one a kind, each the one whose own fields say what the pass says:

- a ticket: `eventTicketClass`/`eventTicketObject`, a class per event (or general entry);
- a member's card: `genericClass`/`genericObject` (`GENERIC_MEMBERSHIP_CARD`), one class for
  every card. Google's loyalty type was the other candidate, but it is a programme of points
  and reward tiers (which a membership has none of) and its class requires `programLogo`, an
  image on a public URL, which the museum has not (Apple's logo is drawn into the .pkpass). A
  generic pass needs no image (without a logo Google shows the first letter of its title, the
  museum's name, as Apple's pass shows its initial) and names the holder in its header;
- a gift card: `giftCardClass`/`giftCardObject`, one class for every card: its own fields are
  what a gift card shows, the card's number and its balance as money (`balance`,
  `balanceUpdateTime`), shown by Google the way a phone shows a gift card, with its barcode
  (`allowBarcodeRedemption`).

The words come from wallet/content.py (PassContent), as Apple's pass takes them: an object's
text is in its order's (membership's, card's) language. A class's words (a ticket's event name,
the gift card's number label) are given in every offered language (`translatedValues`), since
one class serves the passes of every language. An object is INACTIVE when Apple's pass would be
voided (PassContent.voided), one rule for both wallets.
"""

import functools
import json
import logging
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import quote, urlsplit

import urllib3
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext
from google.auth import jwt
from google.auth.exceptions import GoogleAuthError
from google.auth.transport.urllib3 import AuthorizedHttp
from google.oauth2 import service_account

from giftcards.models import GiftCard
from museum import i18n
from museum.text import one_line
from orders.models import Membership, Ticket
from wallet import checks
from wallet.content import GIFT_CARD as GIFT_CARD_PASS
from wallet.content import (
    MEMBERSHIP,
    TICKET,
    Field,
    PassContent,
    gift_card_pass,
    membership_pass,
    ticket_pass,
)
from wallet.exceptions import WalletNotConfigured, WalletRefused, WalletUnavailable
from wallet.models import GoogleObject

logger = logging.getLogger(__name__)

SCOPE = "https://www.googleapis.com/auth/wallet_object.issuer"
SAVE_URL = "https://pay.google.com/gp/v/save/"
GENERAL_ENTRY_CLASS = "general-entry"
MEMBERSHIP_CLASS = "membership"
GIFT_CARD_CLASS = "giftcard"


def is_configured() -> bool:
    """Whether the museum has set up Google Wallet: both of its settings (docs/wallet.md)."""
    return not checks.google_missing()


@dataclass(frozen=True)
class PassType:
    """One of Google's pass types: its class's and object's REST resources, and the save JWT's
    payload key for its objects."""

    name: str

    @property
    def class_resource(self) -> str:
        return f"{self.name}Class"

    @property
    def object_resource(self) -> str:
        return f"{self.name}Object"

    @property
    def payload_key(self) -> str:
        return f"{self.name}Objects"


EVENT_TICKET = PassType("eventTicket")
GENERIC = PassType("generic")
GIFT_CARD = PassType("giftCard")


@dataclass(frozen=True)
class GooglePass:
    """A pass in Google's shape: its type, its class and its object."""

    pass_type: PassType
    wallet_class: dict[str, Any]
    wallet_object: dict[str, Any]

    @property
    def object_id(self) -> str:
        return self.wallet_object["id"]

    @property
    def class_id(self) -> str:
        return self.wallet_class["id"]


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]


class WalletClient:
    """Google's Wallet REST API, the little of it passes need: a class ensured, an object
    inserted or updated, an object read. Every failure is WalletUnavailable."""

    def __init__(self, *, key_file: str, api_url: str, timeout: float):
        self.credentials = service_account.Credentials.from_service_account_file(
            key_file, scopes=[SCOPE]
        )
        # One timeout for the token endpoint and the API alike (the credentials refresh through
        # the same pool); no retries: a visitor is waiting, and asks again after Retry-After.
        pool = urllib3.PoolManager(timeout=urllib3.Timeout(total=timeout), retries=False)
        self.http = AuthorizedHttp(self.credentials, http=pool)
        self.api_url = api_url
        self._classes: set[tuple[str, str]] = set()

    @property
    def email(self) -> str:
        return self.credentials.service_account_email

    def ensure_class(self, pass_type: PassType, wallet_class: dict[str, Any]) -> None:
        """Insert the class unless this process already saw it there (409: it exists)."""
        known = (pass_type.class_resource, wallet_class["id"])
        if known in self._classes:
            return
        self._call("POST", pass_type.class_resource, wallet_class, also=(409,))
        self._classes.add(known)

    def save_object(self, pass_type: PassType, wallet_object: dict[str, Any]) -> dict[str, Any]:
        """Insert the object, or replace it if it exists (a pass saved before, since changed)."""
        answer = self._call("POST", pass_type.object_resource, wallet_object, also=(409,))
        if answer.status == 409:
            path = self._object_path(pass_type, wallet_object["id"])
            answer = self._call("PUT", path, wallet_object)
        return answer.body

    def read_object(self, pass_type: PassType, object_id: str) -> dict[str, Any] | None:
        answer = self._call("GET", self._object_path(pass_type, object_id), also=(404,))
        return None if answer.status == 404 else answer.body

    @staticmethod
    def _object_path(pass_type: PassType, object_id: str) -> str:
        return f"{pass_type.object_resource}/{quote(object_id, safe='')}"

    def _call(
        self, method: str, path: str, body: dict | None = None, *, also: tuple[int, ...] = ()
    ) -> Answer:
        url = f"{self.api_url}/{path}"
        try:
            response = self.http.request(
                method,
                url,
                body=None if body is None else json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            answer = Answer(response.status, json.loads(response.data or b"{}"))
        except (urllib3.exceptions.HTTPError, GoogleAuthError, ValueError) as exc:
            # No message: google-auth's may quote the token endpoint's answer.
            logger.warning("Google Wallet: %s %s failed (%s)", method, path, type(exc).__name__)
            raise WalletUnavailable() from None
        if not (200 <= answer.status < 300 or answer.status in also):
            # Google's message names the field it refused (a 400 is a pass it cannot take).
            error = answer.body.get("error") if isinstance(answer.body, dict) else None
            message = str(error.get("message", ""))[:300] if isinstance(error, dict) else ""
            logger.warning(
                "Google Wallet: %s %s answered %s %s", method, path, answer.status, message
            )
            if 400 <= answer.status < 500 and answer.status != 429:
                raise WalletRefused()
            raise WalletUnavailable()
        return answer


def wallet_client() -> WalletClient:
    """The client for the settings, one a process while its key file is unchanged: its access
    token is reused until it runs out, and a key replaced on disk is read again."""
    if not is_configured():
        raise WalletNotConfigured()
    key_file = settings.MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT
    try:
        changed = os.stat(key_file).st_mtime_ns
        return _client(
            key_file,
            changed,
            settings.MUSEUM_WALLET_GOOGLE_API_URL,
            settings.MUSEUM_WALLET_GOOGLE_TIMEOUT,
        )
    except (OSError, ValueError, KeyError, AttributeError, TypeError, GoogleAuthError) as exc:
        # The operator's to fix (the key file missing or not a service account's): the
        # visitor is told the wallet is away, never a 500.
        logger.error("Google Wallet: the service account key %s is unusable: %r", key_file, exc)
        raise WalletUnavailable() from None


@functools.lru_cache(maxsize=4)
def _client(key_file: str, changed: int, api_url: str, timeout: float) -> WalletClient:
    return WalletClient(key_file=key_file, api_url=api_url, timeout=timeout)


Owner = Ticket | Membership | GiftCard


# Each kind of owner, its GoogleObject field and what its pass shows (wallet/content.py).
KIND: dict[type, str] = {Ticket: TICKET, Membership: MEMBERSHIP, GiftCard: GIFT_CARD_PASS}
OWNER_FIELD = {TICKET: "ticket", MEMBERSHIP: "membership", GIFT_CARD_PASS: "gift_card"}
CONTENT: dict[str, Callable[[Any], PassContent]] = {
    TICKET: ticket_pass,
    MEMBERSHIP: membership_pass,
    GIFT_CARD_PASS: gift_card_pass,
}


def save_pass(owner: Owner) -> str:
    """The one path of every pass to Google: its class ensured, its object inserted (or replaced,
    to what it shows now) and kept as a GoogleObject, and the link that adds it to a visitor's
    Google Wallet. Whether the asker may have it is the caller's question. Calls Google: never
    inside a transaction."""
    kind = KIND[type(owner)]
    client = wallet_client()
    built = google_pass(owner, CONTENT[kind](owner))
    client.ensure_class(built.pass_type, built.wallet_class)
    client.save_object(built.pass_type, built.wallet_object)
    GoogleObject.objects.update_or_create(
        object_id=built.object_id,
        defaults={
            "resource": built.pass_type.object_resource,
            OWNER_FIELD[kind]: owner,
            "saved_at": timezone.now(),
        },
    )
    return save_link(client, built)


def update_object(kept: GoogleObject) -> None:
    """Save the kept object again as its owner shows it now (after a change: wallet/tasks.py):
    its object only, as its class was ensured when it was first saved. Calls Google: never
    inside a transaction. WalletRefused if Google will not take it, WalletUnavailable if it
    cannot now."""
    owner = kept.owner
    built = google_pass(owner, CONTENT[kept.kind](owner))
    wallet_client().save_object(built.pass_type, built.wallet_object)
    GoogleObject.objects.filter(pk=kept.pk).update(saved_at=timezone.now())


def google_pass(owner: Owner, content: PassContent) -> GooglePass:
    """The pass in Google's shape, the type its kind's (the module's docstring says why)."""
    if isinstance(owner, Ticket):
        wallet_class = ticket_class(owner, content)
        return GooglePass(
            EVENT_TICKET, wallet_class, event_ticket_object(content, class_id=wallet_class["id"])
        )
    if isinstance(owner, Membership):
        wallet_class = {"id": qualified(MEMBERSHIP_CLASS)}
        return GooglePass(
            GENERIC, wallet_class, member_card_object(content, class_id=wallet_class["id"])
        )
    wallet_class = gift_card_class(content)
    return GooglePass(
        GIFT_CARD,
        wallet_class,
        gift_card_object(content, balance=owner.balance(), class_id=wallet_class["id"]),
    )


def qualified(suffix: str) -> str:
    """An id of ours as Google's: the issuer's number, a dot, then letters, digits, . _ or -."""
    return f"{settings.MUSEUM_WALLET_GOOGLE_ISSUER_ID}.{suffix}"


def ticket_class(ticket: Ticket, content: PassContent) -> dict[str, Any]:
    """The event-ticket class a ticket's object belongs to: one for general entry, one per
    special event, named in every offered language."""
    suffix = f"event-{ticket.event_id}" if ticket.event_id else GENERAL_ENTRY_CLASS
    return {
        "id": qualified(suffix),
        "issuerName": content.organization,
        "eventName": _in_every_language(
            lambda: one_line(ticket.event.name) if ticket.event else gettext("General entry")
        ),
        "reviewStatus": "UNDER_REVIEW",
    }


def gift_card_class(content: PassContent) -> dict[str, Any]:
    """The one gift-card class: the museum as merchant, its card number labelled in every
    offered language, its barcode shown (the desk scans it)."""
    return {
        "id": qualified(GIFT_CARD_CLASS),
        "issuerName": content.organization,
        "merchantName": content.organization,
        "localizedCardNumberLabel": _in_every_language(lambda: gettext("Code")),
        "allowBarcodeRedemption": True,
        "reviewStatus": "UNDER_REVIEW",
    }


def _in_every_language(words) -> dict[str, Any]:
    """A LocalizedString: `words()` said in each offered language, the museum's as default."""
    said = {}
    for language in settings.MUSEUM_LANGUAGES:
        with i18n.speaking(language):
            said[language] = words()
    museum = settings.MUSEUM_LANGUAGE
    return {
        "defaultValue": {"language": museum, "value": said[museum]},
        "translatedValues": [
            {"language": language, "value": value}
            for language, value in said.items()
            if language != museum
        ],
    }


def event_ticket_object(content: PassContent, *, class_id: str) -> dict[str, Any]:
    """The pass as Google's eventTicketObject: the door's token as its QR code, valid from the
    visit's start to the end of its day, voided (INACTIVE) once the ticket is cancelled."""
    return _object(content, class_id=class_id) | {"textModulesData": _text_modules(content)}


def member_card_object(content: PassContent, *, class_id: str) -> dict[str, Any]:
    """The member's card as Google's genericObject: the museum as its title, the holder (never
    the email) as its header, the card's token the door reads as its QR code with the card's
    code beneath, the rest of the card (type, valid until) as text, valid to the last day."""
    holder = _field(content, "holder")
    card = _field(content, "card")
    wallet_object = _object(content, class_id=class_id) | {
        "genericType": "GENERIC_MEMBERSHIP_CARD",
        "cardTitle": _in_its_language(content, content.organization),
        "subheader": _in_its_language(content, holder.label),
        "header": _in_its_language(content, holder.value),
        "textModulesData": _text_modules(content, shown_apart={"holder"}),
    }
    wallet_object["barcode"]["alternateText"] = card.value
    return wallet_object


def gift_card_object(content: PassContent, *, balance: Decimal, class_id: str) -> dict[str, Any]:
    """The gift card as Google's giftCardObject: its code as the card number and the QR code,
    its balance as money, the last day it may be spent as text and as the end of its validity."""
    return _object(content, class_id=class_id) | {
        "cardNumber": content.barcode,
        "balance": {
            "micros": str(int(balance * 1_000_000)),
            "currencyCode": settings.MUSEUM_CURRENCY,
        },
        "balanceUpdateTime": {"date": timezone.localtime(content.updated_at).isoformat()},
        "textModulesData": _text_modules(content, shown_apart={"balance"}),
    }


def _object(content: PassContent, *, class_id: str) -> dict[str, Any]:
    """What every object has: its id, class, state, QR code and, where known, validity."""
    interval = {}
    if content.relevant_at is not None:
        interval["start"] = {"date": content.relevant_at.isoformat()}
    if content.expires_at is not None:
        interval["end"] = {"date": content.expires_at.isoformat()}
    wallet_object: dict[str, Any] = {
        "id": qualified(content.serial),
        "classId": class_id,
        "state": "INACTIVE" if content.voided else "ACTIVE",
        "barcode": {"type": "QR_CODE", "value": content.barcode},
    }
    if interval:
        wallet_object["validTimeInterval"] = interval
    return wallet_object


def _text_modules(content: PassContent, *, shown_apart: Collection[str] = ()) -> list[dict]:
    """The pass's labelled values as text modules, but those the type shows in its own fields."""
    return [
        {"id": field.key, "header": field.label, "body": field.value}
        for field in content.front + content.back
        if field.key not in shown_apart
    ]


def _field(content: PassContent, key: str) -> Field:
    return next(field for field in content.front if field.key == key)


def _in_its_language(content: PassContent, value: str) -> dict[str, Any]:
    """A LocalizedString of one value, in the pass's language."""
    return {"defaultValue": {"language": content.language, "value": value}}


def save_link(client: WalletClient, built: GooglePass) -> str:
    """https://pay.google.com/gp/v/save/{jwt}: the JWT, signed with the service account's key,
    names the object saved beforehand and nothing more."""
    claims = {
        "iss": client.email,
        "aud": "google",
        "typ": "savetowallet",
        "iat": int(time.time()),
        # Google only lets the link's button be shown on the museum's own site.
        "origins": [_origin(settings.MUSEUM_PUBLIC_URL)],
        "payload": {
            built.pass_type.payload_key: [{"id": built.object_id, "classId": built.class_id}]
        },
    }
    token = jwt.encode(client.credentials.signer, claims)
    return SAVE_URL + token.decode()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
