"""Middleware the whole service shares: each request's id, log line and metrics, the API's limit
on request bodies, the Content-Security-Policy, the pages' own middleware (sessions, CSRF, the
signed-in user, messages), which API requests go around, and pages' query strings without NUL
characters.

Each costs every request its CPU (docs/performance.md, "What every request pays"): what can be
worked out once per process is, and nothing is computed for an answer that does not use it.
"""

import logging
import time
from collections.abc import Callable

from csp.constants import HEADER
from csp.utils import build_policy
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.validators import ProhibitNullCharactersValidator
from django.http import HttpResponseBadRequest
from django.utils.functional import empty
from rest_framework.views import APIView

from museum import metrics
from museum.context import bound, channel_of, new_request_id
from museum.errors import API_PATH_PREFIX, OCTO_PATH_PREFIX, payload_too_large_response
from museum.throttling import client_address

request_logger = logging.getLogger("museum.request")


def request_log(get_response):
    """One log line and the metrics of every request, under one request id (museum/context.py),
    which the answer carries in `X-Request-ID`. First in MIDDLEWARE: it times and sees every
    answer, the other middleware's own included."""

    def middleware(request):
        # From META: `request.headers` would build a dictionary of every header first.
        request_id = new_request_id(request.META.get("HTTP_X_REQUEST_ID"))
        started = time.perf_counter()
        with bound(request_id, channel=channel_of(request.path)):
            response = get_response(request)
            duration = time.perf_counter() - started
            response["X-Request-ID"] = request_id
            _record(request, response, duration)
        return response

    return middleware


def _record(request, response, duration: float) -> None:
    match = request.resolver_match
    route = match.route if match is not None else "unmatched"
    metrics.HTTP_REQUESTS.labels(route, request.method, str(response.status_code)).inc()
    metrics.HTTP_REQUEST_DURATION.labels(route, request.method).observe(duration)
    if not request_logger.isEnabledFor(logging.INFO):
        return  # its fields (the client's address, the account) are not worked out for nothing
    request_logger.info(
        "%s %s %s",
        request.method,
        request.path,
        response.status_code,
        extra={
            "method": request.method,
            "path": request.path,
            "route": route,
            "status": response.status_code,
            "duration_ms": round(duration * 1000, 1),
            "account_id": _account_id(request),
            "client": client_address(request),
        },
    )


def _account_id(request) -> int | None:
    # The API's authentication sets request.user; the admin's is lazy, and reading one the
    # request never looked at would cost its session and account queries: left out then.
    user = getattr(request, "user", None)
    user = getattr(user, "_wrapped", user)
    if user is None or user is empty or not user.is_authenticated:
        return None
    return user.pk


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # Django reads such a body as empty


def body_size_limit(get_response):
    """Answer 413 to API requests whose body is larger than MUSEUM_MAX_BODY_BYTES.

    A declared Content-Length over the limit is refused before any byte is read. Under WSGI the
    body is never longer than declared (Django's LimitedStream); under ASGI Django hands over
    whatever the client sent, so the body itself is measured too (`request.body`, which the
    parser would read anyway and reads back from memory). Only the APIs, /v1.1 and /octo/, are
    limited (OCTO's answer in OCTO's error shape): the admin keeps Django's bound, its forms carry
    no big documents but can be larger than an API body.
    """

    def middleware(request):
        if request.path.startswith((API_PATH_PREFIX, OCTO_PATH_PREFIX)):
            limit = settings.MUSEUM_MAX_BODY_BYTES
            if _declared_length(request) > limit or len(request.body) > limit:
                return payload_too_large_response(octo=request.path.startswith(OCTO_PATH_PREFIX))
        return get_response(request)

    return middleware


def content_security_policy(get_response):
    """The Content-Security-Policy of CONTENT_SECURITY_POLICY (django-csp's format) on every answer
    but those under its EXCLUDE_URL_PREFIXES (the API docs' inline script), built once per process.

    django-csp's own middleware builds the header from the settings for each answer, for nonces
    and per-view policies: this service has neither, and the building cost a sixth of the floor's
    CPU (docs/performance.md).
    """
    policy = build_policy()
    excluded = tuple(settings.CONTENT_SECURITY_POLICY.get("EXCLUDE_URL_PREFIXES", ()))

    def middleware(request):
        response = get_response(request)
        if not request.path_info.startswith(excluded):
            response.headers.setdefault(HEADER, policy)
        return response

    return middleware


class PagesOnly:
    """For the middleware of the pages (the admin, the desk, the door): an API request goes
    around it. The API authenticates each request itself (HTTP Basic, no session or cookie), its
    views are exempt from CSRF and it shows no messages: this work, which every request paid,
    served none of the API's. Subclasses keep
    the class Django's checks look for (the admin's: sessions, authentication, messages)."""

    get_response: Callable

    def __call__(self, request):
        if request.path_info.startswith(API_PATH_PREFIX):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]


class PageSessionMiddleware(PagesOnly, SessionMiddleware):
    pass


class PageAuthenticationMiddleware(PagesOnly, AuthenticationMiddleware):
    pass


class PageMessageMiddleware(PagesOnly, MessageMiddleware):
    pass


class NoNulInPageQueries:
    """Answer 400 to a page's query string with a NUL character in a parameter's name or value.

    PostgreSQL's text cannot hold one: a search or filter that passed it to the database (the
    desk's search, the admin's list filters and autocomplete, any page to come) would fail there
    with a 500. One guard covers every page. DRF's views (the API, OCTO) are left to their own
    validation, which refuses a NUL by name, in their own words, along with every other mistake;
    form fields refuse NUL themselves (Django's CharField, DRF's), so bodies are left to them.
    """

    message = ProhibitNullCharactersValidator.message

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        # DRF's as_view(), a view set's too, marks the view with its class.
        view_class = getattr(view_func, "cls", None)
        if isinstance(view_class, type) and issubclass(view_class, APIView):
            return None
        names = [
            name
            for name, values in request.GET.lists()
            if "\x00" in name or any("\x00" in value for value in values)
        ]
        if not names:
            return None
        listed = ", ".join(repr(name) for name in names)
        return HttpResponseBadRequest(
            f"{self.message} (in the query string: {listed})",
            content_type="text/plain; charset=utf-8",
        )
