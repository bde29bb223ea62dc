"""Partners' API keys: issued once, kept as an HMAC under the server's secret (a long random key
needs no password hasher: nobody guesses 256 bits, and one HMAC costs microseconds, so every
request may check it), named, revocable, their last use kept to the minute."""

import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from audit.models import Action
from audit.services import record
from octo.models import ApiKey

KEY_PREFIX = "octo_"
# How stale the shown last use may be: one write a minute per busy key, not one per request.
LAST_USE_RESOLUTION = timedelta(minutes=1)


def digest_of(key: str) -> str:
    return salted_hmac("octo.keys.api-key", key, algorithm="sha256").hexdigest()


@transaction.atomic
def issue_api_key(*, account, name: str, by=None) -> tuple[ApiKey, str]:
    """A new key for the partner `account`: the row, and the key itself (shown only now)."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    api_key = ApiKey.objects.create(
        account=account, name=name, prefix=key[: len(KEY_PREFIX) + 6], digest=digest_of(key)
    )
    record(action=Action.CREATED, obj=api_key, by=by, changes={"name": name})
    return api_key, key


@transaction.atomic
def revoke_api_key(*, key_id: int, by=None) -> None:
    api_key = ApiKey.objects.select_for_update().filter(pk=key_id, revoked_at=None).first()
    if api_key is not None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
        record(action=Action.CANCELLED, obj=api_key, by=by)


def account_for_key(key: str) -> tuple[object, ApiKey] | None:
    """The active account a key that is neither revoked nor unknown signs in, and the key."""
    if not key.startswith(KEY_PREFIX) or "\x00" in key:
        return None
    api_key = (
        ApiKey.objects.select_related("account")
        .filter(digest=digest_of(key), revoked_at=None, account__is_active=True)
        .first()
    )
    if api_key is None:
        return None
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USE_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    return api_key.account, api_key
