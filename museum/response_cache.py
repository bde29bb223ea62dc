"""The response cache: responses every visitor shares (opening hours, special events) kept in the
shared cache.

The same page of hours or events is asked for by every visitor, and building it costs several
database round trips and a serializer pass; reading it back is one cache round trip, the
sign-in's own for a signed-in request (`Cached.cache_reads`). Each cache
group ("hours", "events", "slots") has a version in the cache; a response is stored with the
version it was built under and used only while that version is current. Any write to what a
group shows gives it a new version (`group_changed`), on every node at once, since the version
lives in the shared cache. That cache must be one every worker shares (REDIS_URL): in a
per-process cache the new version would reach only the writer's own process. So without
REDIS_URL, MUSEUM_RESPONSE_CACHE_SECONDS is 0 and the settings refuse any other value; the drawn
ticket images (tickets/selectors.py) follow it.

A write changes the version right away and again once its transaction commits: a reader that
built a response from the rows as they were before the commit stored it under the first version,
which the second makes stale. Writes that bypass Django (SQL by hand) are seen when the
response's MUSEUM_RESPONSE_CACHE_SECONDS run out; 0 turns the cache off.

Ours: Django's per-view cache (cache_page) expires responses only with time, and drf-extensions'
cache_response keeps each response's headers whole (the RateLimit-* of whoever built it) and has
no new version at commit; this is a version key per group and the response's data, about a
hundred lines.
"""

import functools
import hashlib
import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.http import HttpResponse, HttpResponseBase
from django.utils import timezone
from django.utils.translation import get_language
from rest_framework import mixins

from museum.cache import read_many

# The headers that belong to the response (paging); per-request ones (RateLimit-*) are not kept.
KEPT_HEADERS = ("X-Total-Count", "Link")


def _version_key(group: str) -> str:
    return f"museum:response-cache:{group}:version"


def _new_version(group: str) -> None:
    cache.set(_version_key(group), uuid.uuid4().hex, timeout=None)


def now_and_on_commit(change: Callable[[], None]) -> None:
    """Make a cached copy stale now and again once the write's transaction commits: a reader in
    between may have stored what it read of the rows as they were before the commit."""
    change()
    # Robust: the write has committed, so a cache lost since then must not answer it as failed
    # (a client would buy again). Django logs the error; the copy made stale before the commit
    # stays stale, and one stored in between lasts at most MUSEUM_RESPONSE_CACHE_SECONDS.
    transaction.on_commit(change, robust=True)


def group_changed(group: str) -> None:
    """Call after any write to what the group's responses show."""
    now_and_on_commit(lambda: _new_version(group))


def group_changes_with(group: str, *models) -> None:
    """Mark `group` changed on every save and delete of these models (bulk writes call
    group_changed themselves: they send no signals)."""
    on_every_change(models, lambda: group_changed(group), name=f"response-cache:{group}")


def on_every_change(models, changed: Callable[[], None], *, name: str) -> None:
    """Call `changed()` on every save and delete of these models; `name` tells it apart."""
    for model in models:
        for signal in (post_save, post_delete):
            signal.connect(
                lambda sender, **kwargs: changed(),
                sender=model,
                weak=False,
                dispatch_uid=f"{name}:{model._meta.label}:{signal is post_save}",
            )


def cached_response(group: str, request, build, *, moment: str = "") -> HttpResponseBase:
    """The response to this GET, from the cache while `group` is unchanged, else `build()`'s.

    Keyed by the whole URL (host, path, query), the language and the media type negotiated, which
    is all a cached response depends on, the museum's today, which the default dates depend on,
    and `moment`, for an answer that also changes with the time of day. Only a 200 is kept, as
    its renderer wrote it.
    """
    seconds = settings.MUSEUM_RESPONSE_CACHE_SECONDS
    if seconds <= 0:
        return build()
    version_key, key = _keys(group, request, moment)
    # Read already in the sign-in's round trip (`Cached.cache_reads`), else in one of their own.
    found = read_many([version_key, key])
    version = found.get(version_key)
    if version is None:
        _new_version(group)  # never set, or evicted: a fresh version, which nothing stored matches
        version = cache.get(version_key)
    elif (stored := found.get(key)) is not None and stored["version"] == version:
        return _answer(stored)
    response = build()
    if response.status_code != 200 or version is None:
        return response
    # Kept rendered: a hit neither unpickles the data nor renders it again.
    renderer = request.accepted_renderer
    stored = {
        "version": version,
        "content": renderer.render(response.data, request.accepted_media_type, {}),
        "content_type": renderer.media_type,
        "headers": {name: response[name] for name in KEPT_HEADERS if response.has_header(name)},
    }
    cache.set(key, stored, seconds)
    return _answer(stored)


def _keys(group: str, request, moment: str) -> tuple[str, str]:
    """The group's version key and the key of the response to `request`."""
    url = (
        f"{timezone.localdate()} {moment} {get_language()} {request.accepted_media_type}"
        f" {request.build_absolute_uri()}"
    )
    return (
        _version_key(group),
        f"museum:response-cache:{group}:{hashlib.sha256(url.encode()).hexdigest()}",
    )


def _answer(stored: dict) -> HttpResponse:
    # DRF's view still adds its own headers to it (Allow, Vary, RateLimit-*), as to a Response.
    return HttpResponse(
        stored["content"], content_type=stored["content_type"], headers=stored["headers"]
    )


class Cached:
    """View mixin: the answer to a request it caches through `cached_response` under `cached_as`,
    whose keys the sign-in reads in its own round trip (`cache_reads`, museum/authentication.py),
    so that a cached answer makes no round trip of its own."""

    def cached_as(self, request) -> tuple[str, str] | None:
        """The cache group and moment the answer to `request` is cached under; None if it is
        not cached."""
        return None

    def cache_reads(self, request) -> list[str]:
        # Content negotiation runs before authentication in DRF's views; the check is for a
        # request authenticated outside one.
        if (
            settings.MUSEUM_RESPONSE_CACHE_SECONDS <= 0
            or not hasattr(request, "accepted_media_type")
            or (cached_as := self.cached_as(request)) is None
        ):
            return []
        group, moment = cached_as
        return list(_keys(group, request, moment))


class CachedList(Cached, mixins.ListModelMixin):
    """Viewset mixin: `list` answered through `cached_response` for its `cache_group`."""

    cache_group: str

    def cached_as(self, request):
        if getattr(self, "action", None) == "list":
            return self.cache_group, ""
        return super().cached_as(request)

    def list(self, request, *args, **kwargs):
        build = functools.partial(super().list, request, *args, **kwargs)
        return cached_response(self.cache_group, request, build)


class CachedRetrieve(Cached, mixins.RetrieveModelMixin):
    """Viewset mixin: `retrieve` answered through `cached_response` for its `cache_group`.

    A mixin of its own: a viewset with a `retrieve` gets a detail route from DRF's router.
    """

    cache_group: str

    def cached_as(self, request):
        if getattr(self, "action", None) == "retrieve":
            return self.cache_group, ""
        return super().cached_as(request)

    def retrieve(self, request, *args, **kwargs):
        build = functools.partial(super().retrieve, request, *args, **kwargs)
        return cached_response(self.cache_group, request, build)
