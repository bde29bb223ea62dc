"""`museum_drop_waiting`: who is in each drop's line and not yet let in, read from Redis at
each scrape of /metrics (the counters of admissions, tickets sold and tokens refused are
museum/metrics.py's)."""

from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from drops import queue
from drops.models import Drop
from museum.monitoring import register_scrape_time_collector


class DropsWaitingCollector:
    def collect(self):
        waiting = GaugeMetricFamily(
            "museum_drop_waiting", "People in a drop's line not yet let in", labels=["drop"]
        )
        now = timezone.now()
        for pk in Drop.objects.filter(prequeue_opens_at__lte=now, closes_at__gt=now).values_list(
            "pk", flat=True
        ):
            try:
                waiting.add_metric([str(pk)], queue.waiting(pk))
            except queue.Unreachable:
                continue  # the drop is paused; /readyz and the 503s say so
        yield waiting


def register() -> None:
    register_scrape_time_collector(DropsWaitingCollector())
