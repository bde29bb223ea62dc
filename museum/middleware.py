"""Middleware the whole service shares: the API's limit on request bodies."""

from django.conf import settings

from museum.errors import API_PATH_PREFIX, payload_too_large_response


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
    parser would read anyway and reads back from memory). Only /v1.1 is limited: the admin
    keeps Django's bound, its forms carry no big documents but can be larger than an API body.
    """

    def middleware(request):
        if request.path.startswith(API_PATH_PREFIX):
            limit = settings.MUSEUM_MAX_BODY_BYTES
            if _declared_length(request) > limit or len(request.body) > limit:
                return payload_too_large_response()
        return get_response(request)

    return middleware
