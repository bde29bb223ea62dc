"""Google Wallet: a ticket's pass as an eventTicketObject of Google's Wallet API, and the save link
("Add to Google Wallet") that names it.

The object is written through the REST API first and the link's JWT names only its id (a
"skinny" JWT), so the link stays short (Google's limit for a URL is about 2,000 characters) and
the object can be updated later by the same API call: each object saved is kept as a
`GoogleObject`, and a change of its owner saves it again (update_object, from wallet/tasks.py).
google-auth signs both: the service account's credentials get the access token for the REST
calls, and its RSA signer signs the save link's JWT.

The words come from wallet/content.py (PassContent), as Apple's pass takes them: the object's
text modules are labelled in the order's language. The class's event name, a fixed word
("General entry") or the event's name (a column per language), is given in every offered
language (`translatedValues`), since one class serves the orders of every language.
"""

import functools
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
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

from museum import i18n
from museum.text import one_line
from orders.models import Ticket
from wallet import checks
from wallet.content import TICKET, PassContent, ticket_pass
from wallet.exceptions import WalletNotConfigured, WalletRefused, WalletUnavailable
from wallet.models import GoogleObject

logger = logging.getLogger(__name__)

SCOPE = "https://www.googleapis.com/auth/wallet_object.issuer"
SAVE_URL = "https://pay.google.com/gp/v/save/"
GENERAL_ENTRY_CLASS = "general-entry"
EVENT_TICKET_OBJECT = "eventTicketObject"


def is_configured() -> bool:
    """Whether the museum has set up Google Wallet: both of its settings (docs/wallet.md)."""
    return not checks.google_missing()


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
        self._classes: set[str] = set()

    @property
    def email(self) -> str:
        return self.credentials.service_account_email

    def ensure_class(self, wallet_class: dict[str, Any]) -> None:
        """Insert the class unless this process already saw it there (409: it exists)."""
        if wallet_class["id"] in self._classes:
            return
        self._call("POST", "eventTicketClass", wallet_class, also=(409,))
        self._classes.add(wallet_class["id"])

    def save_object(
        self, wallet_object: dict[str, Any], *, resource: str = EVENT_TICKET_OBJECT
    ) -> dict[str, Any]:
        """Insert the object, or replace it if it exists (a pass saved before, since changed)."""
        answer = self._call("POST", resource, wallet_object, also=(409,))
        if answer.status == 409:
            path = f"{resource}/{quote(wallet_object['id'], safe='')}"
            answer = self._call("PUT", path, wallet_object)
        return answer.body

    def read_object(self, object_id: str) -> dict[str, Any] | None:
        answer = self._call("GET", f"eventTicketObject/{quote(object_id, safe='')}", also=(404,))
        return None if answer.status == 404 else answer.body

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


def ticket_save_link(*, ticket: Ticket) -> str:
    """The ticket's pass saved in Google's API (inserted, or updated to what it shows now), and
    the link that adds it to a visitor's Google Wallet. Calls Google: never inside a
    transaction."""
    client = wallet_client()
    wallet_class, wallet_object = ticket_object(ticket)
    client.ensure_class(wallet_class)
    client.save_object(wallet_object)
    GoogleObject.objects.update_or_create(
        object_id=wallet_object["id"],
        defaults={"resource": EVENT_TICKET_OBJECT, "ticket": ticket, "saved_at": timezone.now()},
    )
    return save_link(client, object_id=wallet_object["id"], class_id=wallet_class["id"])


def ticket_object(ticket: Ticket) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ticket's class and its object as Google is to show them now."""
    content = ticket_pass(ticket)
    wallet_class = ticket_class(ticket, content)
    return wallet_class, event_ticket_object(content, class_id=wallet_class["id"])


# A kept object's body as its owner shows it now, by whose pass it is (GoogleObject.kind): what
# an update after a change saves. Each kind that saves a GoogleObject has its line here.
UPDATED_OBJECT: dict[str, Callable[[Any], dict[str, Any]]] = {
    TICKET: lambda ticket: ticket_object(ticket)[1],
}


def update_object(kept: GoogleObject) -> None:
    """Save the kept object again as its owner shows it now (after a change: wallet/tasks.py).
    Calls Google: never inside a transaction. WalletRefused if Google will not take it,
    WalletUnavailable if it cannot now."""
    build = UPDATED_OBJECT.get(kept.kind)
    if build is None:
        logger.error("Google Wallet: no update for %s's object %s", kept.kind, kept.object_id)
        return
    wallet_object = build(kept.owner)
    wallet_client().save_object(wallet_object, resource=kept.resource)
    GoogleObject.objects.filter(pk=kept.pk).update(saved_at=timezone.now())


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
        "textModulesData": [
            {"id": field.key, "header": field.label, "body": field.value}
            for field in content.front + content.back
        ],
    }
    if interval:
        wallet_object["validTimeInterval"] = interval
    return wallet_object


def save_link(client: WalletClient, *, object_id: str, class_id: str) -> str:
    """https://pay.google.com/gp/v/save/{jwt}: the JWT, signed with the service account's key,
    names the object saved beforehand and nothing more."""
    claims = {
        "iss": client.email,
        "aud": "google",
        "typ": "savetowallet",
        "iat": int(time.time()),
        # Google only lets the link's button be shown on the museum's own site.
        "origins": [_origin(settings.MUSEUM_PUBLIC_URL)],
        "payload": {"eventTicketObjects": [{"id": object_id, "classId": class_id}]},
    }
    token = jwt.encode(client.credentials.signer, claims)
    return SAVE_URL + token.decode()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
