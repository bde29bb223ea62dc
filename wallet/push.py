"""Telling the devices that hold a pass that it changed: one push per device through Apple's
Push Notification service (APNs), after which the device asks our web service for the passes
updated (wallet/apple_service.py) and downloads them. The push carries nothing but `{}`.

Ours rather than django_walletpass's push (aioapns): aioapns connects to api.push.apple.com:443
(or the sandbox) and nothing else, so no test could stand in for APNs on loopback, and the
library pushes from a Pass's post_save, inside the saving transaction (wallet/walletpass_app.py
disconnects it). Ours is a few plain calls with httpx over HTTP/2 (APNs speaks nothing else),
token-based: an ES256 JWT signed with the museum's .p8 key, made again every TOKEN_LIFETIME
(APNs refuses a token older than an hour, and one renewed more often than every 20 minutes).
Whether and when to push is the tasks' question (wallet/tasks.py).
"""

import logging
import threading
import time
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from urllib.parse import quote

import httpx
import jwt
from django.conf import settings
from django_walletpass.models import Registration

from wallet import apple

logger = logging.getLogger("wallet.push")

TOKEN_LIFETIME = 30 * 60
# APNs answers within milliseconds; a longer wait is an outage, tried again later.
TIMEOUT = httpx.Timeout(10.0)


class Outcome(StrEnum):
    SENT = "sent"
    # 410: the device no longer takes pushes for the pass type; its registrations go.
    GONE = "gone"
    # APNs away, overloaded (429, 5xx) or refusing our key (403, mended by the museum): again later.
    LATER = "later"
    # Any other answer: a push APNs will never take; logged, not tried again.
    REFUSED = "refused"


def configured() -> bool:
    """Whether passes are pushed: Apple Wallet set up, and the APNs key with its id."""
    return apple.configured() and bool(
        settings.MUSEUM_WALLET_APPLE_APNS_KEY and settings.MUSEUM_WALLET_APPLE_APNS_KEY_ID
    )


_tokens: dict[tuple[str, str, str], tuple[float, str]] = {}
_tokens_lock = threading.Lock()


def provider_token() -> str:
    """The bearer token APNs asks of every push: made once per TOKEN_LIFETIME per process."""
    key_path = settings.MUSEUM_WALLET_APPLE_APNS_KEY
    key_id, team_id = settings.MUSEUM_WALLET_APPLE_APNS_KEY_ID, settings.MUSEUM_WALLET_APPLE_TEAM_ID
    now = time.time()
    with _tokens_lock:
        made = _tokens.get((key_path, key_id, team_id))
        if made is not None and 0 <= now - made[0] < TOKEN_LIFETIME:
            return made[1]
        token = jwt.encode(
            {"iss": team_id, "iat": int(now)},
            Path(key_path).read_text(),
            algorithm="ES256",
            headers={"kid": key_id},
        )
        _tokens[(key_path, key_id, team_id)] = (now, token)
        return token


def push(push_tokens: Iterable[str]) -> dict[str, Outcome]:
    """One push to each device token, over one HTTP/2 connection; what became of each."""
    headers = {
        "apns-topic": settings.MUSEUM_WALLET_APPLE_PASS_TYPE_ID,
        "authorization": f"bearer {provider_token()}",
    }
    base = settings.MUSEUM_WALLET_APPLE_APNS_URL
    pending = list(push_tokens)
    outcomes: dict[str, Outcome] = {}
    with httpx.Client(http2=True, timeout=TIMEOUT) as client:
        for token in pending:
            url = f"{base}/3/device/{quote(token, safe='')}"
            try:
                answer = client.post(url, content=b"{}", headers=headers)
            except httpx.HTTPError as exc:
                # APNs unreachable: the rest of this round would fail the same way.
                logger.warning("APNs unreachable: %s", exc)
                return outcomes | dict.fromkeys(pending[len(outcomes) :], Outcome.LATER)
            outcomes[token] = _outcome(answer)
    return outcomes


def _outcome(answer: httpx.Response) -> Outcome:
    if answer.status_code == 200:
        return Outcome.SENT
    if answer.status_code == 410:
        return Outcome.GONE
    reason = _reason(answer)
    if answer.status_code in (403, 429) or answer.status_code >= 500:
        logger.warning("APNs answered %s (%s): pushed again later", answer.status_code, reason)
        return Outcome.LATER
    logger.error("APNs refused a push with %s (%s)", answer.status_code, reason)
    return Outcome.REFUSED


def _reason(answer: httpx.Response) -> str:
    try:
        return str(answer.json().get("reason", ""))[:100]
    except (ValueError, AttributeError):
        return ""


def push_pass(*, pass_id: int, only: Iterable[str] | None = None) -> list[str]:
    """Push to every device registered for the pass (or to those of `only` still registered);
    the device tokens to push to again later. A token APNs says is gone loses its registrations,
    for every pass: APNs answers for the device and the pass type, which all our passes share."""
    registrations = Registration.objects.filter(pazz_id=pass_id)
    if only is not None:
        registrations = registrations.filter(push_token__in=list(only))
    tokens = sorted(set(registrations.values_list("push_token", flat=True)))
    if not tokens:
        return []
    outcomes = push(tokens)
    gone = [token for token, outcome in outcomes.items() if outcome == Outcome.GONE]
    if gone:
        Registration.objects.filter(push_token__in=gone).delete()
    return [token for token, outcome in outcomes.items() if outcome == Outcome.LATER]
