"""Every error under /v1.1 is an RFC 9457 problem: application/problem+json.

Body: `type` (a URN naming the problem), `title`, `status`, `detail`, `code` (machine-readable),
and for validation errors `errors`, a map from field to messages. Domain exceptions add their own
members (e.g. `reason`). The museum's own exceptions (museum/exceptions.py) are mapped here, once.

Ours: the contract fixes this body; drf-standardized-errors answers in a shape of its own, and
drf-problems (RFC 7807) is unmaintained since 2022. It is one DRF exception handler.
"""

import logging
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from django.utils.translation import gettext_lazy as _
from django.views import defaults
from django_redis.exceptions import ConnectionInterrupted
from django_stubs_ext import StrOrPromise
from redis.exceptions import ConnectionError as CacheConnectionError
from redis.exceptions import TimeoutError as CacheTimeoutError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from museum.context import current_request_id
from museum.exceptions import InvalidInput, MuseumProblem

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_PREFIX = "urn:museum:problem:"
API_PATH_PREFIX = "/v1.1/"
# OCTO's supplier API (octo/): its errors are OCTO's own shape, not problem+json.
OCTO_PATH_PREFIX = "/octo/"
# Long enough for PostgreSQL or Redis to finish a restart or a failover, short enough that clients
# come back soon after.
OUTAGE_RETRY_AFTER_SECONDS = 5
# What a lost database or cache raises. Authentication and throttling read the cache on every
# request: without it they cannot check cheaply or limit guessing, so the answer is a 503 too.
OUTAGES: dict[str, tuple[type[Exception], ...]] = {
    "database": (OperationalError, InterfaceError),
    # django-redis wraps redis-py's errors; its raw client (the counters) raises them as they are.
    "cache": (ConnectionInterrupted, CacheConnectionError, CacheTimeoutError),
}

UNAVAILABLE = {
    "database": _("The database is unavailable for a moment. Please try again shortly."),
    "cache": _("The cache is unavailable for a moment. Please try again shortly."),
}

logger = logging.getLogger(__name__)


# The one mapping from the domain's kinds of problem (museum/exceptions.py) to HTTP statuses.
STATUS_OF_KIND = {
    "invalid": status.HTTP_400_BAD_REQUEST,
    "forbidden": status.HTTP_403_FORBIDDEN,
    "not_found": status.HTTP_404_NOT_FOUND,
    "conflict": status.HTTP_409_CONFLICT,
    "payment_required": status.HTTP_402_PAYMENT_REQUIRED,
    "too_many": status.HTTP_429_TOO_MANY_REQUESTS,
    "provider_down": status.HTTP_502_BAD_GATEWAY,
    "unavailable": status.HTTP_503_SERVICE_UNAVAILABLE,
}


class HttpProblem(exceptions.APIException):
    """A problem of the HTTP exchange itself (a header, a retry), raised by the API's plumbing;
    subclasses set status_code, default_code, title and default_detail."""

    title = _("Bad Request")


def museum_problem_response(problem: MuseumProblem) -> Response:
    """The problem+json answer to a broken rule of the museum."""
    if isinstance(problem, InvalidInput):
        exc = exceptions.ValidationError(problem.errors)
        body = _problem_for(exc, exc.status_code)
        return Response(body, status=exc.status_code, content_type=PROBLEM_CONTENT_TYPE)
    status_code = STATUS_OF_KIND[problem.kind]
    body = problem_body(
        status=status_code,
        code=problem.code,
        title=problem.title,
        detail=problem.detail,
        # `reason` names the museum rule that was broken, for clients that branch on it.
        reason=problem.code,
        **problem.extra,
    )
    response = Response(body, status=status_code, content_type=PROBLEM_CONTENT_TYPE)
    if retry_after := getattr(problem, "retry_after", None):
        response["Retry-After"] = str(retry_after)
    return response


# The titles of the statuses the API answers with, in the request's language (HTTP's own phrase for
# any other).
TITLES = {
    400: _("Bad Request"),
    401: _("Unauthorized"),
    402: _("Payment Required"),
    403: _("Forbidden"),
    404: _("Not Found"),
    405: _("Method Not Allowed"),
    406: _("Not Acceptable"),
    409: _("Conflict"),
    413: _("Payload Too Large"),
    415: _("Unsupported Media Type"),
    428: _("Precondition Required"),
    429: _("Too Many Requests"),
    500: _("Internal Server Error"),
    502: _("Bad Gateway"),
    503: _("Service Unavailable"),
}


def problem_body(
    *, status: int, code: str, detail: StrOrPromise, title: StrOrPromise | None = None, **extra
):
    body = {
        "type": PROBLEM_TYPE_PREFIX + code,
        # Plain text in the active language (the request's), not lazy text for the renderer.
        "title": str(title or TITLES.get(status) or HTTPStatus(status).phrase),
        "status": status,
        "detail": str(detail),
        "code": code,
        **extra,
    }
    # The request's id (also its X-Request-ID): what a client quotes to find its log lines.
    if request_id := current_request_id():
        body["requestId"] = request_id
    return body


def flatten_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """Turn DRF's nested error detail into {"field": [...], "dates.0": [...]}."""
    items: Iterable[tuple[str, Any]]
    if isinstance(detail, dict):
        items = detail.items()
    elif isinstance(detail, list) and not all(isinstance(item, str) for item in detail):
        items = ((str(index), item) for index, item in enumerate(detail) if item)
    else:
        messages = detail if isinstance(detail, list) else [detail]
        return {prefix or "non_field_errors": [str(message) for message in messages]}
    flat: dict[str, list[str]] = {}
    for key, value in items:
        flat.update(flatten_errors(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def _problem_for(exc: exceptions.APIException, status_code: int) -> dict:
    if isinstance(exc, exceptions.ValidationError):
        errors = flatten_errors(exc.detail)
        detail = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in errors.items())
        return problem_body(
            status=status_code,
            code="validation_error",
            title=_("Validation failed"),
            detail=detail,
            errors=errors,
        )
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    code = getattr(exc.detail, "code", None) or exc.default_code
    if isinstance(exc, HttpProblem):
        return problem_body(status=status_code, code=code, title=exc.title, detail=detail)
    return problem_body(status=status_code, code=code, detail=detail)


def problem_exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER: DRF's own handling, then the body rewritten as a problem."""
    # Neither is an APIException, so DRF would let them through to a 500. Authentication queries
    # run inside DRF's request handling too, so a database outage always surfaces here.
    if isinstance(exc, MuseumProblem):
        return museum_problem_response(exc)
    if isinstance(exc, RequestDataTooBig):
        return payload_too_large_response()
    for part, errors in OUTAGES.items():
        if isinstance(exc, errors):
            return unavailable_response(context["request"], exc, part=part)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = exception_handler(exc, context)
    if response is None:
        return None
    response.data = _problem_for(exc, response.status_code)
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def problem_response(*, status: int, code: str, detail: StrOrPromise, **extra) -> JsonResponse:
    return JsonResponse(
        problem_body(status=status, code=code, detail=detail, **extra),
        status=status,
        content_type=PROBLEM_CONTENT_TYPE,
    )


def payload_too_large_response(*, octo: bool = False) -> JsonResponse:
    limit = settings.MUSEUM_MAX_BODY_BYTES
    detail = _("The request body is larger than the limit of %(limit)s bytes.") % {"limit": limit}
    if octo:
        return JsonResponse(
            {"error": "BAD_REQUEST", "errorMessage": detail, "limit": limit}, status=413
        )
    return problem_response(status=413, code="payload_too_large", detail=detail, limit=limit)


def unavailable_response(request, exc: Exception, *, part: str) -> JsonResponse:
    # The class is enough to tell an outage from a lock timeout; the message may name hosts and
    # users, and a traceback per request would flood the log while the database is away.
    logger.warning(
        "%s unavailable (%s.%s) for %s %s",
        part.capitalize(),
        type(exc).__module__,
        type(exc).__qualname__,
        request.method,
        request.path,
    )
    response = problem_response(
        status=503,
        code=f"{part}_unavailable",
        detail=UNAVAILABLE[part],
    )
    response["Retry-After"] = str(OUTAGE_RETRY_AFTER_SECONDS)
    return response


def _is_api(request) -> bool:
    return request.path.startswith(API_PATH_PREFIX)


# Django's handlers for what never reaches a DRF view (unknown paths, a crash): problem+json
# under /v1.1, Django's usual pages elsewhere (admin, docs).
def not_found(request, exception=None):
    if _is_api(request):
        return problem_response(
            status=404,
            code="not_found",
            detail=_("There is nothing at %(path)s.") % {"path": request.path},
        )
    return defaults.page_not_found(request, exception)


def bad_request(request, exception=None):
    # Django answers RequestDataTooBig (a body read outside a DRF view) with a 400; it is a 413.
    if _is_api(request) and isinstance(exception, RequestDataTooBig):
        return payload_too_large_response()
    if _is_api(request):
        return problem_response(
            status=400, code="bad_request", detail=_("The request is malformed.")
        )
    return defaults.bad_request(request, exception)


def server_error(request):
    if _is_api(request):
        return problem_response(
            status=500, code="server_error", detail=_("Something went wrong on our side.")
        )
    return defaults.server_error(request)
