"""Four gunicorn workers started from gunicorn.conf.py: every scrape of /metrics counts the
requests of all of them (a killed worker's included), and every request logs one JSON line under
the id its answer carries in X-Request-ID."""

import json
import os
import re
import signal
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.servers import gunicorn_node, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

REQUESTS = 200
TOKEN = "metrics-token-for-this-test"
HEALTHZ_OK = re.compile(
    r'^museum_http_requests_total\{method="GET",route="healthz",status="200"\} (\S+)$', re.M
)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def healthz_count(url: str) -> float:
    status, _, body = get(f"{url}/metrics", {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200
    found = HEALTHZ_OK.search(body.decode())
    return float(found.group(1)) if found else 0.0


def test_metrics_count_every_workers_requests_and_each_request_logs_one_json_line(
    node_database, tmp_path
):
    metrics_dir = tmp_path / "metrics"
    environment = {
        "DATABASE_URL": node_database,
        "MUSEUM_METRICS_TOKEN": TOKEN,
        "MUSEUM_METRICS_DIR": str(metrics_dir),
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
    }
    log = tmp_path / "gunicorn.log"
    with gunicorn_node(environment=environment, log=log, workers=4, threads=1) as url:
        offered = [f"probe-{uuid.uuid4().hex}" for _ in range(REQUESTS)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(
                pool.map(lambda rid: get(f"{url}/healthz", {"X-Request-ID": rid}), offered)
            )
        assert [status for status, _, _ in answers] == [200] * REQUESTS
        # The proxy's well-formed id is the request's id.
        assert [headers["X-Request-ID"] for _, headers, _ in answers] == offered

        assert get(f"{url}/metrics")[0] == 404  # never public
        assert get(f"{url}/metrics", {"Authorization": "Bearer wrong"})[0] == 404
        counts = [healthz_count(url) for _ in range(8)]
        assert min(counts) >= REQUESTS, counts
        # The requests were spread: more than one worker wrote its counts.
        workers = {int(p.stem.split("_")[-1]) for p in (metrics_dir / "web").glob("counter_*.db")}
        assert len(workers) > 1

        # A worker killed is replaced; what it counted stays counted.
        os.kill(max(workers), signal.SIGKILL)
        wait_until(lambda: healthz_count(url) >= REQUESTS, what="a scrape after the kill")
        assert min(healthz_count(url) for _ in range(4)) >= REQUESTS

    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    request_lines = [line for line in lines if line["logger"] == "museum.request"]
    by_id: dict[str, list[dict]] = {}
    for line in request_lines:
        by_id.setdefault(line["request_id"], []).append(line)
    for request_id in offered:
        [line] = by_id[request_id]  # exactly one line per request
        assert line["route"] == "healthz" and line["method"] == "GET" and line["status"] == 200
        assert line["level"] == "INFO" and line["time"] and line["duration_ms"] >= 0
        assert line["client"] == "127.0.0.1"
