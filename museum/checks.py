"""System checks for a deployment (`manage.py check --deploy`): settings that must not be left
at their local-work defaults once DEBUG is off."""

from django.conf import settings
from django.core import checks

# Backends that deliver nothing: a deployment that forgot its mail settings would silently
# email nobody, and print every buyer's admission token to the log.
UNDELIVERING_EMAIL_BACKENDS = {
    "museum.mail.ConsoleEmailBackend",
    "django.core.mail.backends.console.EmailBackend",
    "django.core.mail.backends.locmem.EmailBackend",
    "django.core.mail.backends.dummy.EmailBackend",
    "django.core.mail.backends.filebased.EmailBackend",
}
LONGEST_SESSION_SECONDS = 24 * 60 * 60


def register() -> None:
    for check in (
        check_ticket_signing_keys,
        check_email_backend,
        check_session_age,
        check_public_url,
    ):
        checks.register(check, checks.Tags.security, deploy=True)


def check_ticket_signing_keys(app_configs, **kwargs):
    if settings.DEBUG or settings.MUSEUM_TICKET_SIGNING_KEYS:
        return []
    return [
        checks.Error(
            "MUSEUM_TICKET_SIGNING_KEYS is not set, so tickets are signed with a key derived "
            "from SECRET_KEY: whoever learns the secret forges tickets, and changing it voids "
            "every ticket sold.",
            hint=(
                "Set MUSEUM_TICKET_SIGNING_KEYS to a 32-byte random seed, base64url, e.g. from "
                '`python -c "import os,base64;print(base64.urlsafe_b64encode(os.urandom(32))'
                '.decode())"` (docs/security.md, Ticket signing keys).'
            ),
            id="museum.E001",
        )
    ]


def check_email_backend(app_configs, **kwargs):
    if settings.DEBUG or settings.EMAIL_BACKEND not in UNDELIVERING_EMAIL_BACKENDS:
        return []
    return [
        checks.Error(
            f"EMAIL_BACKEND is {settings.EMAIL_BACKEND}: confirmation emails reach no buyer, "
            "and the console and file backends write their admission tokens out in the clear.",
            hint=(
                "Set EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend and EMAIL_HOST, "
                "EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS, "
                "DEFAULT_FROM_EMAIL (docs/deployment.md)."
            ),
            id="museum.E002",
        )
    ]


def check_session_age(app_configs, **kwargs):
    if settings.DEBUG or settings.SESSION_COOKIE_AGE <= LONGEST_SESSION_SECONDS:
        return []
    return [
        checks.Error(
            f"SESSION_COOKIE_AGE is {settings.SESSION_COOKIE_AGE} seconds: an admin or door "
            "session left open on a shared device stays signed in for more than a day.",
            hint=f"Keep SESSION_COOKIE_AGE at {LONGEST_SESSION_SECONDS} seconds or less.",
            id="museum.E003",
        )
    ]


LOCAL_PUBLIC_URLS = ("http://127.0.0.1", "http://localhost")


def check_public_url(app_configs, **kwargs):
    local = settings.MUSEUM_PUBLIC_URL.startswith(LOCAL_PUBLIC_URLS)
    if settings.DEBUG or settings.MUSEUM_CANCEL_INSTRUCTIONS or not local:
        return []
    return [
        checks.Warning(
            f"MUSEUM_PUBLIC_URL is {settings.MUSEUM_PUBLIC_URL}: the cancel link in every email "
            "and PDF leads visitors to their own computer.",
            hint=(
                "Set MUSEUM_PUBLIC_URL to the address visitors reach the service at, e.g. "
                "https://tickets.museum.example, or MUSEUM_CANCEL_INSTRUCTIONS to the museum's "
                "own words on cancelling (docs/configuration.md)."
            ),
            id="museum.W001",
        )
    ]
