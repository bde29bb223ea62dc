"""gunicorn's settings for the museum service: `gunicorn museum.wsgi` reads this file from the
working directory (docs/deployment.md). Command-line options still override it.

It prepares the metrics of several workers (prometheus-client's multiprocess mode, see
museum/monitoring.py): before the first worker starts, each worker's counts go to files in
`$MUSEUM_METRICS_DIR/web`, emptied here at each start (old files would add a previous run's
counts), and a worker that exits is marked dead, so a scrape keeps its counts and drops its live
gauges. The task worker writes to `$MUSEUM_METRICS_DIR/worker` (deploy/systemd), and a scrape
sums both.
"""

import multiprocessing
import os
import shutil
import tempfile
from pathlib import Path

# Set before any worker imports prometheus_client, which reads it once, at its import: this file
# is read by the master before it forks or loads the application.
_own_metrics_dir = not os.environ.get("MUSEUM_METRICS_DIR")
_metrics_dir = Path(os.environ.get("MUSEUM_METRICS_DIR") or tempfile.mkdtemp(prefix="museum-"))
_web_metrics = _metrics_dir / "web"
os.environ["MUSEUM_METRICS_DIR"] = str(_metrics_dir)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(_web_metrics)

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
# One sync worker per core (docs/performance.md); behind nginx, which buffers slow clients.
workers = int(os.environ.get("GUNICORN_WORKERS") or multiprocessing.cpu_count())
# A worker stuck longer than this is replaced; an API request takes milliseconds.
timeout = 30
graceful_timeout = 10
# Logs go to stderr, where systemd's journal keeps them; the service logs each request itself
# (one JSON line with its id), so gunicorn's own access log stays off.
accesslog = None


def on_starting(server):
    shutil.rmtree(_web_metrics, ignore_errors=True)
    _web_metrics.mkdir(parents=True)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid, str(_web_metrics))


def on_exit(server):
    if _own_metrics_dir:  # a folder of this run's own: nobody else reads it
        shutil.rmtree(_metrics_dir, ignore_errors=True)
