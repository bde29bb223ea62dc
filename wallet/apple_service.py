"""Apple Wallet's web service (Apple's "PassKit web service"): what a device calls at the pass's
webServiceURL, /wallet/apple/v1/... (museum/urls.py). django_walletpass's views, each a thin
subclass here that

- answers a caller without the pass's token exactly as one naming no pass: 401 both (the library
  answers 404 for an unknown serial number and 401 for a wrong token, which tells a stranger
  which serial numbers exist);
- refuses a malformed request with a 400 where the library fails (a body without `pushToken`, a
  `passesUpdatedSince` it cannot read, a device id longer than its column);
- is rate-limited per client address (registrations and logs more tightly);
- serves our kept pass (wallet/apple.py), built again first if what it shows has changed.

The device's log (POST /v1/log) is not stored: the library writes each message as a row, without
any authentication, so anyone could fill the database. Its messages help whoever debugs a pass
that a device refuses; they go to our log, a few a request and each cut short.
"""

import json
import logging
from datetime import UTC, datetime

from django.db.models import Max, Q
from django.http import HttpResponse
from django.utils import timezone
from django.utils.cache import get_conditional_response
from django.utils.crypto import constant_time_compare
from django.utils.http import http_date, quote_etag
from django_walletpass import classviews
from django_walletpass.models import Pass
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from museum.throttling import AddressRateThrottle, WalletRegistrationRateThrottle
from wallet import apple

logger = logging.getLogger("wallet.apple")

# The library's columns (device id, serial number, pass type) hold 150 characters.
LONGEST_ID = 150
# What one device's log request may put in ours.
LOG_MESSAGES, LOG_MESSAGE_LENGTH = 10, 500


def _plain(value: str) -> bool:
    """An id as Apple sends one: short, printable (no NUL, which PostgreSQL's text refuses)."""
    return 0 < len(value) <= LONGEST_ID and value.isprintable()


def authorized_pass(request, pass_type_id: str, serial_number: str) -> Pass | None:
    """The pass named, if the request carries its token ("ApplePass <token>"); else None, for an
    unknown pass and a wrong token alike."""
    found = None
    if _plain(pass_type_id) and _plain(serial_number):
        found = Pass.objects.filter(
            pass_type_identifier=pass_type_id, serial_number=serial_number
        ).first()
    expected = f"ApplePass {found.authentication_token}" if found else "ApplePass -"
    given = request.META.get("HTTP_AUTHORIZATION", "")
    # Compared in constant time, and for an unknown pass too.
    return found if constant_time_compare(given, expected) and found else None


def _unauthorized() -> Response:
    return Response({}, status=status.HTTP_401_UNAUTHORIZED)


def _bad_request() -> Response:
    return Response({}, status=status.HTTP_400_BAD_REQUEST)


class AppleWebService:
    """What every view of Apple's web service shares: no account (each request carries its
    pass's token, checked per pass), plain JSON, and the address's request rate."""

    authentication_classes: tuple = ()
    permission_classes = (AllowAny,)
    # Apple's protocol, not the API's: outside the API's schema and its generated clients.
    schema = None
    renderer_classes = (JSONRenderer,)
    throttle_classes: tuple = (AddressRateThrottle,)


class RegisterPass(AppleWebService, classviews.RegisterPassViewSet):
    """POST: a device registers for a pass's updates (201; 200 if it was); DELETE: it stops."""

    throttle_classes = (AddressRateThrottle, WalletRegistrationRateThrottle)

    def create(self, request, device_library_id, pass_type_id, serial_number):
        if authorized_pass(request, pass_type_id, serial_number) is None:
            return _unauthorized()
        try:
            push_token = json.loads(request.body).get("pushToken")
        except (ValueError, AttributeError):
            push_token = None
        if not (isinstance(push_token, str) and push_token and _plain(device_library_id)):
            return _bad_request()
        return super().create(request, device_library_id, pass_type_id, serial_number)

    def destroy(self, request, device_library_id, pass_type_id, serial_number):
        if authorized_pass(request, pass_type_id, serial_number) is None:
            return _unauthorized()
        if not _plain(device_library_id):
            return _bad_request()
        return super().destroy(request, device_library_id, pass_type_id, serial_number)


class UpdatedPasses(AppleWebService, classviews.RegistrationsViewSet):
    """GET: the serial numbers of a device's passes changed since `passesUpdatedSince` (the
    `lastUpdated` of its previous answer), or 204.

    Ours in full: the library's lists only the passes changed at its latest moment (the others
    changed since are missed), fails (500) on a tag it cannot read, and answers 400 to a device
    with no passes, where Apple's reference answers 204."""

    def list(self, request, device_library_id, pass_type_id):
        try:
            since = _moment(request.query_params.get("passesUpdatedSince"))
        except ValueError:
            return _bad_request()
        if not (_plain(device_library_id) and _plain(pass_type_id)):
            return _bad_request()
        passes = Pass.objects.filter(
            registrations__device_library_identifier=device_library_id,
            pass_type_identifier=pass_type_id,
        )
        # What changed and was not built again yet (a pass is rebuilt when asked for): the
        # passes of tickets still to come, the only tickets whose content can still matter, and
        # every member card's and gift card's (a renewal, a refund credited back, an expiry:
        # any can change one, and a device holds few).
        current = (
            Q(museum_pass__ticket__date__gte=timezone.localdate())
            | Q(museum_pass__membership__isnull=False)
            | Q(museum_pass__gift_card__isnull=False)
        )
        for pazz in passes.filter(current):
            apple.refreshed(pazz)
        if since is not None:
            passes = passes.filter(updated_at__gt=since)
        last = passes.aggregate(last=Max("updated_at"))["last"]
        if last is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        serials = sorted(set(passes.values_list("serial_number", flat=True)))
        return Response({"lastUpdated": last.isoformat(), "serialNumbers": serials})


def _moment(tag: str | None) -> datetime | None:
    """The moment a `lastUpdated` tag names (ours: ISO 8601), None without one; ValueError if
    it names none."""
    if tag is None:
        return None
    moment = datetime.fromisoformat(tag)
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


class LatestVersion(AppleWebService, classviews.LatestVersionViewSet):
    """GET: the pass as it is now, with Last-Modified; 304 if not modified since the device's."""

    def retrieve(self, request, pass_type_id, serial_number):
        pazz = authorized_pass(request, pass_type_id, serial_number)
        kept = apple.refreshed(pazz) if pazz is not None else None
        if kept is None:
            return _unauthorized()
        response = HttpResponse(bytes(kept.pkpass), content_type=apple.PKPASS)
        modified = int(kept.pazz.updated_at.timestamp())
        response["Last-Modified"] = http_date(modified)
        # Last-Modified counts seconds: the ETag tells two builds within one second apart.
        response["ETag"] = quote_etag(kept.fingerprint[:32])
        return get_conditional_response(
            request, etag=response["ETag"], last_modified=modified, response=response
        )


class DeviceLog(AppleWebService, classviews.LogViewSet):
    """POST: a device's messages about passes it could not use, to our log (see above)."""

    throttle_classes = (AddressRateThrottle, WalletRegistrationRateThrottle)

    def create(self, request):
        try:
            messages = json.loads(request.body).get("logs")
        except (ValueError, AttributeError):
            messages = None
        if not isinstance(messages, list):
            return _bad_request()
        for message in messages[:LOG_MESSAGES]:
            text = "".join(c if c.isprintable() else " " for c in str(message))
            logger.info("Apple Wallet device log: %s", text[:LOG_MESSAGE_LENGTH])
        return Response({}, status=status.HTTP_200_OK)
