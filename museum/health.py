"""GET /healthz: can this instance reach its database and its cache? For load balancers.
GET /readyz: that, and is the task queue being worked? For deployments and alerts; what is wrong
only to the metrics scraper (its token or a listed address), the status alone to anyone else."""

import logging
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from museum.monitoring import may_scrape, queue_state

logger = logging.getLogger(__name__)


def _database_reachable() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


def _cache_reachable() -> bool:
    # A key of our own: a value another instance wrote must not pass for a working cache.
    key = f"healthz:{uuid.uuid4().hex}"
    cache.set(key, "ok", timeout=10)
    reachable = cache.get(key) == "ok"
    cache.delete(key)
    return reachable


def _check(name: str, probe) -> str:
    # Whatever the backend raises (psycopg, redis, sqlite3, a timeout) means "down" here: the
    # probe must answer 503, never crash. The body is public, so the details go to the log only.
    try:
        return "ok" if probe() else "unavailable"
    except Exception as exc:
        logger.warning("Health check: %s unavailable (%s)", name, type(exc).__qualname__)
        return "unavailable"


# A plain Django view, not DRF: no authentication, no throttling, and not part of the API schema.
@never_cache
@require_safe
def healthz(request):
    parts = {
        "database": _check("database", _database_reachable),
        "cache": _check("cache", _cache_reachable),
    }
    healthy = all(state == "ok" for state in parts.values())
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", **parts}, status=200 if healthy else 503
    )


def _task_queue() -> str:
    """ "ok", or what is wrong with a queue (each has its worker, and periodic tasks due every
    minute): no worker running its tasks, or tasks left waiting."""
    limit = timedelta(minutes=settings.MUSEUM_READY_TASK_MINUTES)
    for queue in settings.TASKS["default"]["QUEUES"]:
        state = queue_state(queue=queue)
        named = "" if queue == "default" else f"{queue} "
        if state.worker_last_seen is None or timezone.now() - state.worker_last_seen > limit:
            return f"no {named}worker seen"
        if state.oldest_age > limit:
            return f"oldest {named}task waiting {int(state.oldest_age.total_seconds())} s"
    return "ok"


# What the apps above add to /readyz's details, each registered by its own app (AppConfig.ready):
# optional parts (a wallet's certificates) that an operator reads, never a reason to be unready.
_REPORTED: dict[str, Callable[[], str]] = {}


def register_reported(name: str, state: Callable[[], str]) -> None:
    _REPORTED[name] = state


# Not for the load balancer: a stopped task worker must not take every web node out of service.
# For a deployment's gate ("is the new release serving and worked?") and for alerts.
@never_cache
@require_safe
def readyz(request):
    parts = {
        "database": _check("database", _database_reachable),
        "cache": _check("cache", _cache_reachable),
    }
    # The queue is in the database: "unknown" without it.
    parts["tasks"] = _task_queue() if parts["database"] == "ok" else "unknown"
    ready = all(state == "ok" for state in parts.values())
    # The queue's state (how long tasks wait, whether a worker runs) is the operator's.
    details = {}
    if may_scrape(request):
        details = {**parts, **{name: state() for name, state in _REPORTED.items()}}
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", **details}, status=200 if ready else 503
    )
