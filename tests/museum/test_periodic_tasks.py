"""Periodic tasks: scheduled by migrate and by every run, run by the task worker, with no cron."""

import datetime as dt

import pytest
import time_machine
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from museum.idempotency import KEY_LIFETIME
from museum.models import IdempotencyKey, PeriodicTask
from museum.periodic import PERIODIC_TASKS, schedule_periodic_tasks
from orders.models import ANONYMISED_EMAIL
from tests.conftest import run_task_worker
from tests.factories import TicketFactory, UserFactory

# The worker commits (see run_task_worker).
pytestmark = pytest.mark.django_db(transaction=True)


def waiting_runs() -> dict[str, int]:
    ready = DBTaskResult.objects.filter(status=TaskResultStatus.READY)
    return {path: ready.filter(task_path=path).count() for path in PERIODIC_TASKS}


def test_migrate_leaves_one_next_run_waiting_for_each_periodic_task():
    assert waiting_runs() == dict.fromkeys(PERIODIC_TASKS, 1)
    for path, every in PERIODIC_TASKS.items():
        recorded = PeriodicTask.objects.get(path=path)
        assert DBTaskResult.objects.get(id=recorded.next_run_id).run_after == recorded.next_run_at
        assert recorded.next_run_at <= timezone.now() + every

    assert schedule_periodic_tasks() == []  # again, as a second migrate or run would: no more
    assert waiting_runs() == dict.fromkeys(PERIODIC_TASKS, 1)


def test_the_worker_anonymises_tickets_and_purges_keys_each_hour_by_itself(settings):
    settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS = 30
    ticket = TicketFactory(date=timezone.localdate() - dt.timedelta(days=31))
    IdempotencyKey.objects.create(
        user=UserFactory(), key="k", created_at=timezone.now() - KEY_LIFETIME
    )

    run_task_worker()
    assert IdempotencyKey.objects.exists()  # not due yet: nothing ran

    with time_machine.travel(timezone.now() + dt.timedelta(hours=1, minutes=1), tick=False):
        run_task_worker()

        ticket.order.refresh_from_db()
        assert ticket.order.email == ANONYMISED_EMAIL
        assert not IdempotencyKey.objects.exists()
        # Each run left its next one waiting, an interval later.
        assert waiting_runs() == dict.fromkeys(PERIODIC_TASKS, 1)
        anonymising = PeriodicTask.objects.get(path="orders.jobs.anonymise_orders")
        assert anonymising.next_run_at == timezone.now() + dt.timedelta(hours=1)


def test_a_run_lost_with_its_worker_is_replaced_by_the_next_periodic_run():
    lost = PeriodicTask.objects.get(path="orders.jobs.anonymise_orders")
    # What a worker killed before its run scheduled the next leaves: a run that never finishes.
    DBTaskResult.objects.get(id=lost.next_run_id).claim("a-worker-that-died")

    assert schedule_periodic_tasks() == ["orders.jobs.anonymise_orders"]
    assert waiting_runs() == dict.fromkeys(PERIODIC_TASKS, 1)


@pytest.mark.django_db(transaction=True)
def test_an_upgrade_forgets_the_runs_of_tasks_whose_code_went():
    executor = MigrationExecutor(connection)
    executor.migrate([("museum", "0004_idempotency_key_location")])
    gone, kept = "tickets.tasks.anonymise_tickets", "orders.jobs.anonymise_orders"
    for path in (gone, kept):
        PeriodicTask.objects.update_or_create(
            path=path, defaults={"next_run_id": "x", "next_run_at": timezone.now()}
        )
        DBTaskResult.objects.create(
            status=TaskResultStatus.READY,
            args_kwargs={"args": [], "kwargs": {}},
            task_path=path,
            backend_name="default",
            run_after=timezone.now(),
            exception_class_path="",
            traceback="",
        )

    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert not PeriodicTask.objects.filter(path=gone).exists()
    assert not DBTaskResult.objects.filter(task_path=gone).exists()
    assert PeriodicTask.objects.filter(path=kept).exists()
    assert DBTaskResult.objects.filter(task_path=kept, status=TaskResultStatus.READY).exists()
