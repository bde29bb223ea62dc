"""What the current request is, for every line it logs and every task it enqueues.

A request id is taken from the proxy's `X-Request-ID` when it is well formed, or made here; the
request middleware (museum/middleware.py) binds it for the request's duration, a task enqueued
by the request carries it in its arguments and binds it again while it runs, and every log record
gets it (RequestIdFilter). `current_request_id()` is the one way to read it (the audit log records
it). A context variable, so each thread of a threaded worker has its own.
"""

import contextvars
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

# nginx's $request_id is 32 hex digits, other proxies send UUIDs; anything else (too long, or
# with characters that could forge a log line) is replaced rather than trusted.
WELL_FORMED_ID = re.compile(r"[A-Za-z0-9._-]{8,128}")

_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")
# Where a sale or cancellation came from, for the metrics: api, admin, door, or task.
_channel: contextvars.ContextVar[str] = contextvars.ContextVar("channel", default="task")


def new_request_id(offered: str | None = None) -> str:
    if offered and WELL_FORMED_ID.fullmatch(offered):
        return offered
    return uuid.uuid4().hex


def current_request_id() -> str:
    """The id of the request (or of the task enqueued by one) being served; "" outside one."""
    return _request_id.get()


def current_channel() -> str:
    return _channel.get()


def channel_of(path: str) -> str:
    for prefix, channel in (("/v1.1/", "api"), ("/admin/", "admin"), ("/door/", "door")):
        if path.startswith(prefix):
            return channel
    return "other"


@contextmanager
def bound(request_id: str, *, channel: str = "task") -> Iterator[None]:
    tokens = (_request_id.set(request_id), _channel.set(channel))
    try:
        yield
    finally:
        _request_id.reset(tokens[0])
        _channel.reset(tokens[1])


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every record, for the formatters (settings.LOGGING)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get()
        return True
