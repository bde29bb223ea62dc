"""`Idempotency-Key` on the POSTs that create: a retry gets the first answer, not a second ticket.

The semantics of Stripe's and pretix's keys, and of the IETF draft "The Idempotency-Key HTTP Header
Field": the key is the client's, scoped to its account.

- The same key with the same request (method, path and body bytes) gets the stored status and
  body, marked `Idempotent-Replayed: true`; the work is not done again.
- The same key with another request is a 422 problem (`idempotency_key_reused`).
- While a request with the key is still running, the key is a 409 (`idempotency_key_in_use`)
  with `Retry-After`.
- 409, 429 and 5xx answers are not kept: the conflict or the outage may be gone on a retry, so the
  key stays free. Every other answer is kept for KEY_LIFETIME; the hourly task
  `purge_idempotency_keys` (museum/tasks.py) deletes older keys.

Across workers and nodes the database decides. The key's row is created and committed first (the
unique constraint makes it one row), then the request runs in a transaction that holds the row's
lock and writes the answer into the row in the same commit as its work. A parallel request with the
key skips the locked row (no waiting) and gets the 409; one after the commit finds the answer. A
crash rolls back the work and frees the lock together, so the key is never stuck and the work is
never half done.

Ours: that one transaction for the work and its stored answer is the point, and the established
library (django-idempotency-key, unmaintained since 2023) keeps answers in a storage of its own,
apart from the work's transaction.
"""

import functools
import hashlib
import re
from datetime import timedelta

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.exceptions import APIException

from museum.errors import HttpProblem
from museum.exceptions import MuseumProblem
from museum.models import IdempotencyKey
from museum.renderers import MuseumJSONRenderer

KEY_LIFETIME = timedelta(hours=24)
# Printable ASCII, as an HTTP header carries it without encoding trouble; 255 as Stripe allows.
KEY_SHAPE = re.compile(r"[\x20-\x7e]{1,255}")
REPLAYED_HEADER = "Idempotent-Replayed"
IN_USE_RETRY_AFTER_SECONDS = 1

IDEMPOTENCY_KEY_PARAMETER = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[ -~]+$"},
    OpenApiParameter.HEADER,
    description=(
        "A unique value of your choosing (1-255 printable ASCII characters, e.g. a UUID) that "
        "makes a retry safe: for 24 hours the same key with the same request answers what the "
        "first request got, without doing it again. The same key with another request is a 422; "
        "while the first is still running, a 409 with Retry-After."
    ),
)


class InvalidIdempotencyKey(HttpProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_idempotency_key"
    title = _("Invalid idempotency key")
    default_detail = _("An Idempotency-Key is 1 to 255 printable ASCII characters.")


class IdempotencyKeyInUse(HttpProblem):
    status_code = status.HTTP_409_CONFLICT
    default_code = "idempotency_key_in_use"
    title = _("Idempotency key in use")
    default_detail = _("A request with this Idempotency-Key is still running; retry shortly.")
    wait = IN_USE_RETRY_AFTER_SECONDS  # DRF's exception handler turns it into Retry-After


class IdempotencyKeyReused(HttpProblem):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_code = "idempotency_key_reused"
    title = _("Idempotency key reused")
    default_detail = _("This Idempotency-Key was used for another request; use a new key.")


def is_kept(status_code: int) -> bool:
    return status_code < 500 and status_code not in (409, 429)


def idempotent(view_method):
    """Decorate a DRF view's create method to honour an Idempotency-Key header."""

    @functools.wraps(view_method)
    def wrapper(view, request, *args, **kwargs):
        key = request.headers.get("Idempotency-Key")
        if key is None:
            return view_method(view, request, *args, **kwargs)
        if not KEY_SHAPE.fullmatch(key):
            raise InvalidIdempotencyKey()
        fingerprint = {
            "request_method": request.method,
            "request_path": request.path,
            "request_sha256": hashlib.sha256(request.body).hexdigest(),
        }
        # Committed on its own, so that a parallel request finds this row and its lock.
        IdempotencyKey.objects.bulk_create(
            [IdempotencyKey(user=request.user, key=key, created_at=timezone.now())],
            ignore_conflicts=True,
        )
        with transaction.atomic():
            record = (
                IdempotencyKey.objects.select_for_update(skip_locked=True)
                .filter(user=request.user, key=key)
                .first()
            )
            if record is None:
                # Locked: a request with this key is running. (Or, rarely, the purge deleted
                # the expired row in between; a retry is the right answer to both.)
                raise IdempotencyKeyInUse()
            if (
                record.response_status is not None
                and record.created_at > timezone.now() - KEY_LIFETIME
            ):
                return _replay(record, fingerprint)
            response = _respond(view, view_method, request, *args, **kwargs)
            if is_kept(response.status_code):
                _keep(record, fingerprint, response)
        return response

    return wrapper


def _respond(view, view_method, request, *args, **kwargs):
    try:
        # A savepoint: a refused request leaves nothing behind, and the key's row can still
        # take the refusal.
        with transaction.atomic():
            return view_method(view, request, *args, **kwargs)
    except (APIException, MuseumProblem, Http404, PermissionDenied) as exc:
        # What DRF would answer; anything else (an outage, a bug) is not an answer to keep and
        # goes on to DRF, rolling back with this transaction.
        return view.handle_exception(exc)


def _keep(record: IdempotencyKey, fingerprint: dict, response) -> None:
    for name, value in fingerprint.items():
        setattr(record, name, value)
    record.created_at = timezone.now()
    record.response_status = response.status_code
    record.response_content_type = response.content_type or MuseumJSONRenderer.media_type
    record.response_body = MuseumJSONRenderer().render(response.data).decode()
    record.response_location = response.get("Location", "")
    record.save()


def _replay(record: IdempotencyKey, fingerprint: dict) -> HttpResponse:
    if any(getattr(record, name) != value for name, value in fingerprint.items()):
        raise IdempotencyKeyReused()
    response = HttpResponse(
        record.response_body.encode(),
        status=record.response_status,
        content_type=record.response_content_type,
    )
    response[REPLAYED_HEADER] = "true"
    if record.response_location:
        response["Location"] = record.response_location
    return response


def purge_expired_keys() -> int:
    """Delete keys older than KEY_LIFETIME; returns how many."""
    deleted, _ = IdempotencyKey.objects.filter(
        created_at__lte=timezone.now() - KEY_LIFETIME
    ).delete()
    return deleted
