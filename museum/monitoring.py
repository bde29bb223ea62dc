"""GET /metrics, for Prometheus, and what it and /readyz read of the task queue when asked.

The counters are declared in museum/metrics.py. Under gunicorn (PROMETHEUS_MULTIPROC_DIR set by
gunicorn.conf.py) a scrape sums the files of every worker, the dead ones included, so a count
never goes down when a worker is replaced; without it, the process's own registry answers.

Never public: the scraper sends `Authorization: Bearer <MUSEUM_METRICS_TOKEN>`, or comes from one
of MUSEUM_METRICS_ADDRESSES (the client's address as MUSEUM_NUM_PROXIES says). Anyone else gets
a 404, as for a page that does not exist.
"""

import hmac
import ipaddress
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.db.models import Max
from django.http import Http404, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from museum.throttling import client_address


@dataclass(frozen=True)
class QueueState:
    depth: int  # tasks due now and not started
    oldest_age: timedelta  # how long the oldest of them has been due; 0 if none
    worker_last_seen: datetime | None  # when a worker last started a task


def queue_state(*, queue: str | None = None) -> QueueState:
    """The task queue's state: of one queue (`queue`), or of all."""
    now = timezone.now()
    tasks = (
        DBTaskResult.objects.all()
        if queue is None
        else DBTaskResult.objects.filter(queue_name=queue)
    )
    due = tasks.ready()  # READY and due: the backend's partial index
    depth = due.count()
    oldest = due.order_by("run_after", "enqueued_at").values_list("run_after", "enqueued_at")
    first = oldest.first()
    age = timedelta(0)
    if first is not None:
        run_after, enqueued_at = first
        due_since = enqueued_at if run_after == get_date_max() else max(run_after, enqueued_at)
        age = max(now - due_since, timedelta(0))
    seen = tasks.exclude(status=TaskResultStatus.READY).aggregate(seen=Max("started_at"))["seen"]
    return QueueState(depth=depth, oldest_age=age, worker_last_seen=seen)


def _database_connections() -> dict[str, int]:
    """This database's server connections by state (active, idle, ...); PostgreSQL only."""
    if connection.vendor != "postgresql":
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(state, 'unknown'), count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() GROUP BY 1"
        )
        return dict(cursor.fetchall())


class ScrapeTimeCollector:
    """What is read from the database when scraped rather than counted: one answer for the
    whole service, whichever worker is asked."""

    def collect(self):
        state = queue_state()
        yield GaugeMetricFamily(
            "museum_task_queue_depth", "Tasks due and not started", value=state.depth
        )
        yield GaugeMetricFamily(
            "museum_task_queue_oldest_age_seconds",
            "How long the oldest task due has waited",
            value=state.oldest_age.total_seconds(),
        )
        connections = GaugeMetricFamily(
            "museum_database_connections",
            "Connections to the service's database, by state (PostgreSQL)",
            labels=["state"],
        )
        for state_name, count in _database_connections().items():
            connections.add_metric([state_name], count)
        yield connections


# What the apps above read when scraped, each registered by its own app (AppConfig.ready), so
# this plumbing reads nothing of theirs.
_app_collectors: list = []


def register_scrape_time_collector(collector) -> None:
    """Add a collector (an object with `collect()`, as prometheus_client's) read at each scrape."""
    _app_collectors.append(collector)


class AllProcessesCollector:
    """The counts of every process that writes into MUSEUM_METRICS_DIR's folders: gunicorn's
    workers (web/, gunicorn.conf.py) and the task worker (worker/, deploy/systemd)."""

    def __init__(self, folder: Path):
        self.folder = folder

    def collect(self):
        return MultiProcessCollector.merge(sorted(self.folder.glob("*/*.db")), accumulate=True)


def exposition() -> bytes:
    """Every metric in Prometheus' text format."""
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        counted = CollectorRegistry()
        counted.register(AllProcessesCollector(Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).parent))
    else:
        counted = REGISTRY
    scraped = CollectorRegistry()
    scraped.register(ScrapeTimeCollector())
    for collector in _app_collectors:
        scraped.register(collector)
    return generate_latest(counted) + generate_latest(scraped)


def may_scrape(request) -> bool:
    """Whether the request comes from the metrics scraper: its token, or a listed address."""
    token = settings.MUSEUM_METRICS_TOKEN
    offered = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(offered.encode(), f"Bearer {token}".encode()):
        return True
    if not settings.MUSEUM_METRICS_ADDRESSES:
        return False
    try:
        address = ipaddress.ip_address(client_address(request))
    except ValueError:
        return False
    return any(address in network for network in settings.MUSEUM_METRICS_ADDRESSES)


@never_cache
@require_safe
def metrics_view(request):
    if not may_scrape(request):
        raise Http404
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
