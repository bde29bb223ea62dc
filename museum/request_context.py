"""The request being served, for code far from the view: the audit log's request id and actor.

Until the service has request ids of its own, the id is the client's or proxy's `X-Request-ID`
(when it looks like one) or a new one, and it is sent back in the answer's `X-Request-ID`.
`current_request_id()` is the one function that reads it, so its source can change alone.
"""

import re
import uuid
from contextvars import ContextVar

from django.http import HttpRequest

_request: ContextVar[HttpRequest | None] = ContextVar("museum_request", default=None)
# A proxy's id is kept if it is short and plain; anything else is replaced, not logged as sent.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,100}")


def current_request() -> HttpRequest | None:
    return _request.get()


def current_request_id() -> str:
    """The id of the request being served; "" outside a request (commands, tasks)."""
    request = _request.get()
    return getattr(request, "request_id", "") if request is not None else ""


def request_context(get_response):
    """Give each request an id and make it, and the request, readable while it is served."""

    def middleware(request):
        sent = request.headers.get("X-Request-ID", "")
        request.request_id = sent if _REQUEST_ID.fullmatch(sent) else uuid.uuid4().hex
        token = _request.set(request)
        try:
            response = get_response(request)
        finally:
            _request.reset(token)
        response["X-Request-ID"] = request.request_id
        return response

    return middleware
