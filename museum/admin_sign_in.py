"""The admin login's limits on failed sign-ins (the door and the desk sign in there too).

django-axes locks a username from one address after MUSEUM_ADMIN_FAILURE_LIMIT wrong passwords.
That alone let one address try a few passwords for each of many usernames, and many addresses
try one username. Axes compares every combination it counts with one limit, so the wider limits
are the API's own, on the API's counters (museum/throttling.py): per address
(MUSEUM_AUTH_FAILURES_PER_ADDRESS) and per username from everywhere
(MUSEUM_AUTH_FAILURES_PER_USERNAME). A guesser has one budget for both faces, not one each.

Axes' documented way in: its handler (settings.AXES_HANDLER), extended here.
"""

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username

from museum.throttling import client_address, record_failed_sign_in, sign_in_lockout


def _username(request, credentials: dict | None) -> str:
    return get_client_username(request, credentials) or ""


class AdminSignInHandler(AxesDatabaseHandler):
    """Axes' own lockout, and the API's failed sign-in limits checked and counted with it."""

    def is_locked(self, request, credentials: dict | None = None) -> bool:
        # Asked by axes' backend before any password is checked.
        if super().is_locked(request, credentials):
            return True
        lockout, _, _ = sign_in_lockout(
            username=_username(request, credentials), address=client_address(request)
        )
        return lockout is not None

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        # An attempt refused by a lockout (flagged by axes' backend, see settings) checked no
        # password: it counts nowhere, so a lockout ends when its window or cool-off does.
        if request is not None and not getattr(request, "axes_locked_out", False):
            record_failed_sign_in(
                username=_username(request, credentials), address=client_address(request)
            )
        super().user_login_failed(sender, credentials, request, **kwargs)
