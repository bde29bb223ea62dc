"""The request being served, for code far from the view: the audit log's actor and its admin.

Its id is museum/context.py's (`current_request_id`), bound by the request log's middleware; what
its sign-in read from the cache is museum/cache.py's (`read_along`), scoped here.
"""

from contextvars import ContextVar

from django.http import HttpRequest

from museum.cache import request_reads

_request: ContextVar[HttpRequest | None] = ContextVar("museum_request", default=None)


def current_request() -> HttpRequest | None:
    return _request.get()


def request_context(get_response):
    """Make the request readable while it is served."""

    def middleware(request):
        token = _request.set(request)
        try:
            with request_reads():
                return get_response(request)
        finally:
            _request.reset(token)

    return middleware
