"""Rows staff set now and then and every sale reads (the visitor categories and their prices, the
accounts' own sale limits), kept in each process while their version in the shared cache stands.

Read with a statement each, they cost a sale two of its statements; kept, a sale reads only their
versions, in its sign-in's round trip when its view names them (`cache_reads`: the purchase and
the orders API), else in one of its own. Any save or delete of such a row deletes its version
(signals, at once and again after the commit, as museum/response_cache.py does), so the next
use on every node loads them again: a price or a limit staff change applies to the next sale.
An update that sends no signal (QuerySet.update(), SQL by hand) is seen once the version expires,
MUSEUM_RESPONSE_CACHE_SECONDS after it was made; 0 keeps nothing. Without a shared cache a signal
cannot reach the other processes: the rows are loaded for every use.

Ours: Django's cache framework keeps values in the cache, not in the process, and each use
would unpickle them; a kept value here is the loaded objects themselves, which nobody changes
(a sale only reads them).
"""

import secrets
from collections.abc import Callable
from typing import Generic, TypeVar

from django.conf import settings
from django.core.cache import cache

from museum.cache import read
from museum.response_cache import now_and_on_commit, on_every_change

T = TypeVar("T")


def version_of(key: str, seconds: int) -> str | None:
    """The current version kept at `key`, made if there is none (for `seconds`). Read before what
    it versions is loaded: a change committed after the read deletes it, so what was loaded with
    it is never used. None if a change deleted it again meanwhile."""
    version = read(key)
    if version is None:
        version = secrets.token_hex(16)
        if not cache.add(key, version, seconds):
            # Another process made one meanwhile (None if a change deleted it again since).
            version = cache.get(key)
    return version


def _keeping() -> bool:
    # Only a shared cache's version reaches every process; 0 seconds keeps nothing.
    return settings.SHARED_CACHE and settings.MUSEUM_RESPONSE_CACHE_SECONDS > 0


class Kept(Generic[T]):
    """What `load()` returns, kept in this process while the version at `version_key` stands."""

    def __init__(self, name: str, load: Callable[[], T]):
        self.version_key = f"museum:kept:{name}:version"
        self._load = load
        self._kept: tuple[str, T] | None = None

    def cache_reads(self) -> list[str]:
        """What `get` reads from the cache, for a view's sign-in to read along (`cache_reads`)."""
        return [self.version_key] if _keeping() else []

    def get(self) -> T:
        if not _keeping():
            return self._load()
        kept = self._kept  # one read: another thread may replace it meanwhile
        version = version_of(self.version_key, settings.MUSEUM_RESPONSE_CACHE_SECONDS)
        if version is not None and kept is not None and kept[0] == version:
            return kept[1]
        value = self._load()
        if version is not None:
            self._kept = (version, value)
        return value

    def changes_with(self, *models) -> None:
        """Load again after any save or delete of these models, on every node."""
        on_every_change(models, self.forget, name=f"kept:{self.version_key}")

    def forget(self) -> None:
        """Load again on every node (called directly for a change that sends no signal, as
        bulk_create's)."""
        now_and_on_commit(self._delete_version)

    def _delete_version(self) -> None:
        cache.delete(self.version_key)
