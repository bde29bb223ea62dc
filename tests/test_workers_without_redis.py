"""Two gunicorn workers and no REDIS_URL, as `make run`'s users deploy next: each worker's cache
is its own memory, and a write is still what the next read answers on every worker.

Each read opens a new connection, so the two workers' accepts share the reads between them.
"""

import pytest

from tests.live_http import call
from tests.servers import NODE_DAY, gunicorn_node, manage

# On PostgreSQL the nodes use the test database, emptied after each test.
pytestmark = pytest.mark.django_db(transaction=True)

READS = 24
DAY = NODE_DAY


def read_many(url: str) -> list:
    answers = [call("GET", url, username="visitor") for _ in range(READS)]
    assert {answer.status for answer in answers} == {200}
    return [answer.json() for answer in answers]


def test_an_edited_event_is_what_every_worker_answers_next(node_database, tmp_path):
    with gunicorn_node(
        environment={"DATABASE_URL": node_database}, log=tmp_path / "gunicorn.log"
    ) as url:
        body = {
            "name": "Night at the museum",
            "location": "Great Hall",
            "eventDescription": "Torches.",
            "dates": [DAY.isoformat()],
            "price": 10,
        }
        created = call("POST", f"{url}/v1.1/special-events", username="staff", body=body)
        assert created.status == 201, created.content
        event = f"{url}/v1.1/special-events/{created.json()['eventId']}"
        week = f"{url}/v1.1/special-events?startDate={DAY.isoformat()}"
        # Every worker has read the event and the list before the change.
        assert {answer["price"] for answer in read_many(event)} == {10}
        assert {page[0]["price"] for page in read_many(week)} == {10}

        patched = call("PATCH", event, username="staff", body={"price": 12.5})
        assert patched.status == 200, patched.content

        assert [answer["price"] for answer in read_many(event)] == [12.5] * READS
        assert [page[0]["price"] for page in read_many(week)] == [12.5] * READS


def test_changed_hours_are_what_every_worker_answers_next(node_database, tmp_path):
    with gunicorn_node(
        environment={"DATABASE_URL": node_database}, log=tmp_path / "gunicorn.log"
    ) as url:
        hours = f"{url}/v1.1/museum-hours?startDate={DAY.isoformat()}&limit=1"
        assert {page[0]["timeOpen"] for page in read_many(hours)} == {"09:00"}

        # An operator's command, a process of its own, as much as a write in another worker.
        manage(
            node_database,
            "seed_hours",
            "--start",
            DAY.isoformat(),
            "--days",
            "1",
            "--pattern",
            "mon-sun 10:00-12:00",
            "--overwrite-staff-edits",
        )

        assert [page[0]["timeOpen"] for page in read_many(hours)] == ["10:00"] * READS
