"""Whether the museum's wallet passes can be given, said where operators look: a system check
(every `manage.py` command and every start) and /readyz's details for the scraper. Passes are
optional: without their settings the links are absent, so nothing here makes the service
unready; what is said is what is missing, or that Apple's pass certificate is about to expire
(devices refuse passes signed by an expired one)."""

import functools
import json
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.core import checks
from django.utils import timezone

APPLE_SETTINGS = (
    "MUSEUM_WALLET_APPLE_PASS_TYPE_ID",
    "MUSEUM_WALLET_APPLE_TEAM_ID",
    "MUSEUM_WALLET_APPLE_CERTIFICATE",
    "MUSEUM_WALLET_APPLE_KEY",
    "MUSEUM_WALLET_APPLE_WWDR_CERTIFICATE",
)
# The key APNs pushes are signed with (wallet/push.py): without it passes update only when asked.
APNS_SETTINGS = ("MUSEUM_WALLET_APPLE_APNS_KEY", "MUSEUM_WALLET_APPLE_APNS_KEY_ID")
GOOGLE_SETTINGS = ("MUSEUM_WALLET_GOOGLE_ISSUER_ID", "MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT")
# A renewed certificate takes Apple's portal and a deployment: a month's notice.
EXPIRY_WARNING = timedelta(days=30)


def _missing(names: tuple[str, ...]) -> list[str]:
    return [name for name in names if not getattr(settings, name)]


def apple_missing() -> list[str]:
    """The Apple settings not set: all of them when the museum offers no Apple passes."""
    return _missing(APPLE_SETTINGS)


def google_missing() -> list[str]:
    """The Google settings not set: both when the museum offers no Google passes."""
    return _missing(GOOGLE_SETTINGS)


def apple_certificate_expires() -> datetime:
    """When the pass certificate stops being valid (its notAfter)."""
    pem = Path(settings.MUSEUM_WALLET_APPLE_CERTIFICATE).read_bytes()
    return x509.load_pem_x509_certificate(pem).not_valid_after_utc


def apple_signing_problem() -> str | None:
    """What keeps the pass certificate, its key and Apple's WWDR certificate from signing a pass
    (each is read as the library reads it when it signs), or None: found here, at the start,
    rather than by the first visitor who asks for a pass. Read once per version of the files
    and password: reading an RSA key checks it, some 50 ms, and /readyz asks often."""
    paths = (
        settings.MUSEUM_WALLET_APPLE_CERTIFICATE,
        settings.MUSEUM_WALLET_APPLE_KEY,
        settings.MUSEUM_WALLET_APPLE_WWDR_CERTIFICATE,
    )
    try:
        versions = tuple(Path(path).stat().st_mtime_ns for path in paths)
    except OSError:
        versions = ()
    return _signing_problem(paths, versions, settings.MUSEUM_WALLET_APPLE_KEY_PASSWORD)


@functools.lru_cache(maxsize=4)
def _signing_problem(
    paths: tuple[str, str, str], versions: tuple[int, ...], password: str
) -> str | None:
    certificate_path, key_path, wwdr_path = paths
    try:
        certificate = x509.load_pem_x509_certificate(Path(certificate_path).read_bytes())
    except (OSError, ValueError):
        return "certificate unreadable"
    try:
        key = serialization.load_pem_private_key(
            Path(key_path).read_bytes(), password.encode() or None
        )
    except (OSError, ValueError, TypeError):
        # cryptography says a wrong password, a missing one and one not needed alike.
        return "key unreadable, or MUSEUM_WALLET_APPLE_KEY_PASSWORD wrong for it"
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    encoding = serialization.Encoding.DER
    if key.public_key().public_bytes(encoding, public) != certificate.public_key().public_bytes(
        encoding, public
    ):
        return "key is not the pass certificate's"
    try:
        x509.load_pem_x509_certificate(Path(wwdr_path).read_bytes())
    except (OSError, ValueError):
        return "WWDR certificate unreadable"
    return None


def apple_state(now: datetime | None = None) -> str:
    """ "ok", "not configured", or what is wrong: the settings missing, what cannot sign
    (apple_signing_problem), the certificate expiring within EXPIRY_WARNING or expired."""
    missing = apple_missing()
    if len(missing) == len(APPLE_SETTINGS):
        return "not configured"
    if missing:
        return f"missing {', '.join(missing)}"
    problem = apple_signing_problem()
    if problem is not None:
        return problem
    now = now or timezone.now()
    expires = apple_certificate_expires()
    if expires <= now:
        return f"certificate expired on {expires.date().isoformat()}"
    if expires - now <= EXPIRY_WARNING:
        return f"certificate expires on {expires.date().isoformat()}"
    return "ok"


def apns_state() -> str:
    """ "ok", "not configured" (passes update only when a device asks), or what is wrong: a
    setting missing, or a key file that is no EC private key (every push would be refused)."""
    missing = _missing(APNS_SETTINGS)
    if len(missing) == len(APNS_SETTINGS):
        return "not configured"
    if missing:
        return f"missing {', '.join(missing)}"
    try:
        pem = Path(settings.MUSEUM_WALLET_APPLE_APNS_KEY).read_bytes()
        if not isinstance(
            serialization.load_pem_private_key(pem, None), ec.EllipticCurvePrivateKey
        ):
            raise ValueError
    except (OSError, ValueError, TypeError):
        return "APNs key unreadable"
    return "ok"


def google_state() -> str:
    """ "ok", "not configured", or what is wrong: a setting missing, or a key file that is not
    a service account's key."""
    missing = google_missing()
    if len(missing) == len(GOOGLE_SETTINGS):
        return "not configured"
    if missing:
        return f"missing {', '.join(missing)}"
    try:
        key = json.loads(Path(settings.MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT).read_text())
        if not isinstance(key, dict) or not {"client_email", "private_key"} <= key.keys():
            raise ValueError
    except (OSError, ValueError):
        return "service account key unreadable"
    return "ok"


def check_wallets(app_configs, **kwargs) -> list[checks.CheckMessage]:
    said: list[checks.CheckMessage] = []
    for what, state, check_id in (
        ("Apple Wallet passes", apple_state(), "wallet.W001"),
        ("Google Wallet passes", google_state(), "wallet.W002"),
        ("Apple Wallet pushes", apns_state(), "wallet.W003"),
    ):
        if state not in ("ok", "not configured"):
            said.append(
                checks.Warning(
                    f"{what}: {state}.",
                    hint="docs/wallet.md says how to get and renew each of them.",
                    id=check_id,
                )
            )
    return said


def register() -> None:
    checks.register(check_wallets)
