"""Middleware the whole service shares: the API's limit on request bodies."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig

from museum.errors import API_PATH_PREFIX, payload_too_large_response


class CappedStream:
    """A request body that raises RequestDataTooBig once more than `limit` bytes are read."""

    def __init__(self, stream, limit: int):
        self._stream = stream
        self._remaining = limit

    def read(self, size=-1):
        return self._take(self._stream.read, size)

    def readline(self, size=-1):
        return self._take(self._stream.readline, size)

    def close(self):
        self._stream.close()

    def _take(self, read, size):
        # Reading one byte past the limit is enough to know the body is too big, and never more.
        allowed = max(self._remaining, 0) + 1
        chunk = read(allowed if size is None or size < 0 else min(size, allowed))
        self._remaining -= len(chunk)
        if self._remaining < 0:
            raise RequestDataTooBig("The request body is larger than MUSEUM_MAX_BODY_BYTES.")
        return chunk


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # Django reads such a body as empty; the capped stream guards the rest.


def body_size_limit(get_response):
    """Answer 413 to API requests whose body is larger than MUSEUM_MAX_BODY_BYTES.

    A declared Content-Length over the limit is refused before any byte is read. Under ASGI,
    Django does not cut the stream at Content-Length, so a body may be longer than it claims;
    Django itself stops such a body only at DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB), and the capped
    stream stops it at our limit. Only /v1.1 is limited, the admin keeps Django's bound: its
    forms carry no big documents, but can be larger than an API body.
    """

    def middleware(request):
        if request.path.startswith(API_PATH_PREFIX):
            limit = settings.MUSEUM_MAX_BODY_BYTES
            if _declared_length(request) > limit:
                return payload_too_large_response()
            # HttpRequest reads its body only through _stream; there is no public hook.
            request._stream = CappedStream(request._stream, limit)
        return get_response(request)

    return middleware
