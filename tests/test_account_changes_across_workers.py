"""A password change, or a lost permission, is refused by every worker at once, with Redis shared
or without it.

Two gunicorn workers have each remembered the credential (and, with Redis, kept the account and
its permissions with it); the password or the account's groups are then changed by an
operator's command, a process of its own, as much another node as a write through the admin
would be. Each read opens a new connection, so the two workers' accepts share the reads between
them.
"""

import pytest
import redis

from tests.live_http import call
from tests.servers import gunicorn_node, manage

# On PostgreSQL the nodes use the test database, emptied after each test.
pytestmark = pytest.mark.django_db(transaction=True)

REDIS_URL = "redis://127.0.0.1:6379/10"  # a database of its own, flushed before and after
READS = 24
REFUSED_READS = 8  # each is a wrong password for the hasher, within the failure budget
NEW_PASSWORD = "a brand new passphrase"

CHANGE_PASSWORD = f"""
from django.contrib.auth.models import User
visitor = User.objects.get(username="visitor")
visitor.set_password({NEW_PASSWORD!r})
visitor.save()
"""

LEAVE_GROUPS = """
from django.contrib.auth.models import User
User.objects.get(username="staff").groups.clear()
"""


@pytest.fixture(params=["own cache", "Redis"])
def cache_environment(request):
    """The nodes' and the operator's cache settings: none (each process's memory) or Redis."""
    if request.param == "own cache":
        yield {}
        return
    cache = redis.Redis.from_url(REDIS_URL)
    cache.flushdb()
    try:
        yield {"REDIS_URL": REDIS_URL}
    finally:
        cache.flushdb()
        cache.close()


def test_a_changed_password_is_refused_by_every_worker_on_the_next_request(
    node_database, cache_environment, tmp_path
):
    environment = {"DATABASE_URL": node_database, **cache_environment}
    with gunicorn_node(environment=environment, log=tmp_path / "gunicorn.log") as url:
        hours = f"{url}/v1.1/museum-hours"
        assert {call("GET", hours, username="visitor").status for _ in range(READS)} == {200}

        manage(node_database, "shell", "-c", CHANGE_PASSWORD, environment=cache_environment)

        refused = [call("GET", hours, username="visitor") for _ in range(REFUSED_READS)]
        assert [answer.status for answer in refused] == [401] * REFUSED_READS
        changed = call("GET", hours, username="visitor", password=NEW_PASSWORD)
        assert changed.status == 200


def test_a_member_removed_from_its_group_is_refused_by_every_worker_on_the_next_request(
    node_database, cache_environment, tmp_path
):
    environment = {"DATABASE_URL": node_database, **cache_environment}
    with gunicorn_node(environment=environment, log=tmp_path / "gunicorn.log") as url:
        check_in = f"{url}/v1.1/tickets/check-in"
        # Past the permission, refused for the missing scan: a 400.
        passed = {call("POST", check_in, username="staff", body={}).status for _ in range(READS)}
        assert passed == {400}

        manage(node_database, "shell", "-c", LEAVE_GROUPS, environment=cache_environment)

        refused = {call("POST", check_in, username="staff", body={}).status for _ in range(READS)}
        assert refused == {403}
