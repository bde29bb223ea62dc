"""`Authorization: Bearer <key>`: a partner's API key (octo.keys), the one way /octo/ signs in."""

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from museum.throttling import RateThrottle
from octo.keys import account_for_key


class BearerKeyAuthentication(BaseAuthentication):
    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != b"bearer":
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Send one API key after Bearer.")
        try:
            key = parts[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid API key.") from None
        found = account_for_key(key)
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return found

    def authenticate_header(self, request):
        return 'Bearer realm="octo"'


class KeyRateThrottle(RateThrottle):
    """MUSEUM_THROTTLE_USER_RATE requests per API key, as accounts have per account."""

    scope = "user"

    def get_cache_key(self, request, view):
        if request.auth is None:
            return None
        return self.cache_format % {"scope": "octo-key", "ident": request.auth.pk}
