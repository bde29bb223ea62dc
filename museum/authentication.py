"""HTTP Basic authentication for every operation under /v1.1.

Django's password hasher costs ~300 ms of CPU per check, on purpose, and Basic auth sends the
password with every request. So a credential that passed the hasher is remembered for
MUSEUM_AUTH_CACHE_SECONDS in the shared cache, bound to the account's current password hash,
username and active flag: later requests skip the hasher, while a password change, a
deactivation or a deletion takes effect on the next request.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils.crypto import constant_time_compare, salted_hmac
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication, get_authorization_header

from museum.throttling import (
    client_address,
    one_password_check_at_a_time,
    record_failed_sign_in,
    refuse_if_locked_out,
)


def _hmac(purpose: str, value: str | bytes) -> str:
    return salted_hmac(f"museum.authentication.{purpose}", value, algorithm="sha256").hexdigest()


def verified_credential_key(authorization: bytes) -> str:
    # An HMAC with SECRET_KEY, never the header: whoever reads the cache learns no password.
    return f"museum:verified-credential:{_hmac('credential', authorization)}"


def remember_verified_credential(*, authorization: bytes, user) -> None:
    cache.set(
        verified_credential_key(authorization),
        {"user_id": user.pk, "password": _hmac("password", user.password)},
        timeout=settings.MUSEUM_AUTH_CACHE_SECONDS,
    )


def recall_verified_user(*, authorization: bytes, username: str):
    """The account this exact header was verified for, if it still may sign in with it."""
    key = verified_credential_key(authorization)
    remembered = cache.get(key)
    if remembered is None:
        return None
    # Loading the account is one query, needed for the request anyway; comparing its current
    # password hash is what makes a password change end the remembered credential. get(), not
    # first(): on every request, first()'s ORDER BY is a good part of building this query.
    User = get_user_model()
    try:
        user = User._default_manager.get(pk=remembered["user_id"])
    except User.DoesNotExist:
        user = None
    if (
        user is None
        or not user.is_active
        or user.get_username() != username
        or not constant_time_compare(_hmac("password", user.password), remembered["password"])
    ):
        cache.delete(key)
        return None
    return user


class MuseumBasicAuthentication(BasicAuthentication):
    www_authenticate_realm = "museum"

    def authenticate_credentials(self, userid, password, request=None):
        # PostgreSQL refuses NUL in text; without this a crafted header would reach the
        # database as a query error instead of a plain "wrong credentials".
        if "\x00" in userid or "\x00" in password:
            raise exceptions.AuthenticationFailed("Invalid username/password.")
        authorization = get_authorization_header(request)
        user = recall_verified_user(authorization=authorization, username=userid)
        if user is not None:
            # Proven and free to check, so accepted even while its username is locked out.
            return (user, None)
        # Before the hasher: DRF's throttles run only after authentication, and a client sending
        # wrong passwords as fast as it can would otherwise keep every CPU hashing.
        address = client_address(request)
        refuse_if_locked_out(username=userid, address=address)
        with one_password_check_at_a_time(address=address):
            try:
                user, _ = super().authenticate_credentials(userid, password, request)
            except exceptions.AuthenticationFailed:
                record_failed_sign_in(username=userid, address=address)
                raise
        remember_verified_credential(authorization=authorization, user=user)
        return (user, None)
