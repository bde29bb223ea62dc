"""What an operator watches during a drop: who waits, who was let in, the tickets they bought,
the admissions refused, and one JSON line per admission."""

import datetime as dt
import json

import pytest
import time_machine
from django.utils import timezone
from prometheus_client import REGISTRY

from tests.conftest import client_for
from tests.drops.conftest import buyers, make_drop
from tests.orders.conftest import order_body

pytestmark = pytest.mark.django_db
TOKEN = "a-token-for-the-scraper"


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_drop_counts_its_admissions_sales_and_refusals(
    drops_redis, drop_day, settings, anonymous_client, caplog, django_capture_on_commit_callbacks
):
    drop = make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    people = buyers(4)
    url = f"/v1.1/drops/{drop.pk}/queue"
    before = {
        name: sample(name)
        for name in ("museum_drop_admissions_total", "museum_drop_tickets_sold_total")
    }
    refused = sample("museum_drop_tokens_refused_total", reason="required")
    now = timezone.now()
    with time_machine.travel(now, tick=False):
        for person in people:
            client_for(person).post(url, {}, format="json")
    with time_machine.travel(now + dt.timedelta(seconds=2), tick=False), caplog.at_level("INFO"):
        token = client_for(people[0]).get(url).json()["admission"]["token"]
        body = order_body(drop_day.date, ("adult", 3), entryTime="10:00")
        client_for(people[1]).post("/v1.1/orders", body, format="json")  # no admission
        with django_capture_on_commit_callbacks(execute=True):
            client_for(people[0]).post(
                "/v1.1/orders", body, format="json", headers={"Queue-Token": token}
            )
    admissions = [
        json.loads(record.message)
        for record in caplog.records
        if record.name == "museum.drops" and "drop_admission" in record.message
    ]
    assert [line["position"] for line in admissions] == [1, 2]
    assert sample("museum_drop_admissions_total") - before["museum_drop_admissions_total"] == 2
    assert sample("museum_drop_tickets_sold_total") - before["museum_drop_tickets_sold_total"] == 3
    assert sample("museum_drop_tokens_refused_total", reason="required") - refused == 1

    settings.MUSEUM_METRICS_TOKEN = TOKEN
    with time_machine.travel(now + dt.timedelta(seconds=2), tick=False):
        scraped = anonymous_client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert f'museum_drop_waiting{{drop="{drop.pk}"}} 2.0' in scraped.content.decode()
