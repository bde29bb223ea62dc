"""Answers every visitor shares (opening hours, special events) kept in the shared cache.

The same page of hours or events is asked for by every visitor, and building it costs several
database round trips and a serializer pass; reading it back is one cache round trip. Each
section ("hours", "events") has a version in the cache; an answer is stored with the version it
was built under and used only while that version is current. Any write to a section bumps it
(`section_changed`), on every node at once, since the version lives in the shared cache.
That cache must be one every worker shares (REDIS_URL): in a per-process cache the bump would
reach only the writer's own process. So without REDIS_URL, MUSEUM_SHARED_READS_SECONDS is 0 and
the settings refuse any other value; the drawn ticket images (tickets/selectors.py) follow it.

A write bumps the version right away and again once its transaction commits: a reader that
built an answer from the rows as they were before the commit stored it under the first bump,
which the second makes stale. Writes that bypass Django (SQL by hand) are seen when the answer's
MUSEUM_SHARED_READS_SECONDS run out; 0 turns the cache off.

Ours: Django's per-view cache (cache_page) expires answers only with time, and drf-extensions'
cache_response keeps each response's headers whole (the RateLimit-* of whoever built it) and has
no bump at commit; this is a version key per section and the answer's data, about a hundred lines.
"""

import functools
import hashlib
import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone
from rest_framework import mixins
from rest_framework.response import Response

# The headers that belong to the answer (paging); per-request ones (RateLimit-*) are not kept.
KEPT_HEADERS = ("X-Total-Count", "Link")


def _version_key(section: str) -> str:
    return f"museum:shared-reads:{section}:version"


def _bump(section: str) -> None:
    cache.set(_version_key(section), uuid.uuid4().hex, timeout=None)


def now_and_on_commit(change: Callable[[], None]) -> None:
    """Make a cached copy stale now and again once the write's transaction commits: a reader in
    between may have stored what it read of the rows as they were before the commit."""
    change()
    transaction.on_commit(change)


def section_changed(section: str) -> None:
    """Call after any write to what the section's answers show."""
    now_and_on_commit(lambda: _bump(section))


def watch(section: str, *models) -> None:
    """Bump `section` on every save and delete of these models (bulk writes call
    section_changed themselves: they send no signals)."""
    for model in models:
        for signal in (post_save, post_delete):
            signal.connect(
                lambda sender, **kwargs: section_changed(section),
                sender=model,
                weak=False,
                dispatch_uid=f"shared-reads:{section}:{model._meta.label}:{signal is post_save}",
            )


def shared_answer(section: str, request, build) -> Response:
    """The answer to this GET, from the cache while `section` is unchanged, else `build()`'s.

    Keyed by the whole URL (host, path, query), which is all a shared answer depends on, and
    the museum's today, which the default dates depend on. Only a 200 is kept.
    """
    seconds = settings.MUSEUM_SHARED_READS_SECONDS
    if seconds <= 0:
        return build()
    url = f"{timezone.localdate()} {request.build_absolute_uri()}"
    key = f"museum:shared-reads:{section}:{hashlib.sha256(url.encode()).hexdigest()}"
    version_key = _version_key(section)
    found = cache.get_many([version_key, key])  # one round trip
    version = found.get(version_key)
    if version is None:
        _bump(section)  # never set, or evicted: a fresh version, which nothing stored matches
        version = cache.get(version_key)
    elif (stored := found.get(key)) is not None and stored["version"] == version:
        return Response(stored["data"], headers=stored["headers"])
    response = build()
    if response.status_code == 200 and version is not None:
        headers = {name: response[name] for name in KEPT_HEADERS if response.has_header(name)}
        cache.set(key, {"version": version, "data": response.data, "headers": headers}, seconds)
    return response


class SharedList(mixins.ListModelMixin):
    """Viewset mixin: `list` answered through `shared_answer` for `shared_reads_section`."""

    shared_reads_section: str

    def list(self, request, *args, **kwargs):
        build = functools.partial(super().list, request, *args, **kwargs)
        return shared_answer(self.shared_reads_section, request, build)


class SharedRetrieve(mixins.RetrieveModelMixin):
    """Viewset mixin: `retrieve` answered through `shared_answer` for `shared_reads_section`.

    A mixin of its own: a viewset with a `retrieve` gets a detail route from DRF's router.
    """

    shared_reads_section: str

    def retrieve(self, request, *args, **kwargs):
        build = functools.partial(super().retrieve, request, *args, **kwargs)
        return shared_answer(self.shared_reads_section, request, build)
