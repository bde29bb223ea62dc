import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest
import redis
from django.utils import timezone

from drops.models import Drop
from hours.models import EntrySlot
from tests.factories import MuseumDayFactory, UserFactory
from tests.servers import free_port


class OwnRedis:
    """A redis-server of the tests' own, keeping its data in an append-only file, so that a
    test may stop it and start it again where it stood."""

    def __init__(self, folder: Path):
        self.folder, self.port = folder, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.folder), "--save", "", "--appendonly", "yes", "--appendfsync", "always"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis(port=self.port)
        for _ in range(500):  # each ping waits for its answer
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if self.process.poll() is not None:
                    raise RuntimeError("redis-server exited") from None
        raise RuntimeError("redis-server did not answer")

    def stop(self) -> None:
        assert self.process is not None
        self.process.kill()  # as a crash would: only the append-only file is left
        self.process.wait()


@pytest.fixture(scope="module")
def own_redis_server(tmp_path_factory):
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")  # failed under CI (tests/conftest.py needs_tool)
    server = OwnRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def drops_redis(own_redis_server, settings):
    """The drops' Redis: the test's own server, emptied before each test."""
    if own_redis_server.process.poll() is not None:
        own_redis_server.start()
    redis.Redis.from_url(own_redis_server.url).flushdb()
    settings.MUSEUM_DROP_REDIS_URL = own_redis_server.url
    return own_redis_server


@pytest.fixture
def drop_day(db):
    """A timed day three days ahead: 10:00 and 10:30, 4 places each."""
    day = MuseumDayFactory(
        date=timezone.localdate() + dt.timedelta(days=3),
        opens_at=dt.time(10),
        closes_at=dt.time(17),
    )
    for entry in (dt.time(10), dt.time(10, 30)):
        EntrySlot.objects.create(day=day, entry_time=entry, capacity=4)
    return day


def make_drop(day, *, opens_in=dt.timedelta(minutes=5), **fields) -> Drop:
    now = timezone.now()
    opens = now + opens_in
    drop = Drop.objects.create(
        name="Vermeer",
        prequeue_opens_at=min(now, opens),
        opens_at=opens,
        closes_at=opens + dt.timedelta(hours=6),
        **{"outflow_per_minute": 60, "seed": 7, **fields},
    )
    drop.days.add(day)
    return drop


def buyers(n: int, prefix: str = "buyer") -> list:
    return [UserFactory(username=f"{prefix}{i}") for i in range(n)]
