"""HTTP Basic authentication for every operation under /v1.1."""

from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication


class MuseumBasicAuthentication(BasicAuthentication):
    www_authenticate_realm = "museum"

    def authenticate_credentials(self, userid, password, request=None):
        # PostgreSQL refuses NUL in text; without this a crafted header would reach the
        # database as a query error instead of a plain "wrong credentials".
        if "\x00" in userid or "\x00" in password:
            raise exceptions.AuthenticationFailed("Invalid username/password.")
        return super().authenticate_credentials(userid, password, request)
