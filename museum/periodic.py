"""Periodic tasks: background jobs the task worker runs every so often, with no cron.

django-tasks (Django's tasks API, with its database backend) runs a task once, when it is due
(`run_after`), and has no schedule of its own. So each periodic task keeps its next run waiting in
the queue: `migrate` enqueues the first (museum/apps.py), and every run of any periodic task
starts by calling `schedule_periodic_tasks()`, which enqueues its own next run, before its work,
so a run that fails still leaves the next one waiting.

One `PeriodicTask` row per task records its waiting run. It is read and replaced under its row
lock, and a new run is enqueued only when the recorded one is no longer waiting (`READY`): two
runs at once, or a `migrate` during a run, still leave one next run. A worker killed before its run
scheduled the next one leaves a run that never finishes; then the next run of any other periodic
task, or the next `migrate`, enqueues one again. The jobs are idempotent, so a run too many does
nothing wrong.

Ours rather than a library's: the schedulers that exist (Celery beat, django-q2's schedules,
django-tasks-scheduler on RQ) each bring a queue, broker or worker of their own beside
django-tasks, and a systemd timer per job would be a second thing to deploy and keep in step with
this list. This is one table and one function on the queue the service already runs.
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string
from django_tasks import TaskResultStatus
from django_tasks.base import Task
from django_tasks.exceptions import TaskResultDoesNotExist

from museum.models import PeriodicTask

# Module paths, so that the apps' task modules may import this one.
PERIODIC_TASKS = {
    # Work claimed by an attempt lost with its worker is attempted again (museum/lost_work.py):
    # found within 2 minutes of LOST_AFTER, the webhooks' by their sweep below.
    "orders.tasks.resend_lost_order_confirmations": timedelta(minutes=2),
    "orders.refunds.pay_back_lost_refunds": timedelta(minutes=2),
    # Buyers' email and phone go once MUSEUM_PERSONAL_DATA_RETENTION_DAYS have passed (and
    # members' names and email after their membership ended).
    "orders.jobs.anonymise_orders": timedelta(hours=1),
    # Lapsed memberships read expired at once (status_on); the sweep marks them and tells the
    # webhooks. Reminders go on their day, at whatever hour.
    "orders.jobs.expire_memberships": timedelta(hours=1),
    "orders.jobs.remind_members": timedelta(hours=1),
    "museum.tasks.purge_idempotency_keys": timedelta(hours=1),
    "museum.tasks.prune_task_results": timedelta(days=1),
    # Holds that ran out give their places back (a buyer who finds a row full does it too).
    "orders.jobs.release_expired_holds": timedelta(minutes=1),
    # Group requests unanswered in time give their places back; deposits and balances due soon
    # are reminded.
    "groups.jobs.expire_group_requests": timedelta(minutes=5),
    "groups.jobs.remind_groups": timedelta(hours=1),
    # Drops count their places again (the line lets in by them) and offer those that came
    # back, an offer run out unused among them, to their waiting lists.
    "drops.jobs.tend_drops": timedelta(minutes=1),
    # Audit records older than MUSEUM_AUDIT_RETENTION_DAYS go.
    "audit.tasks.purge_audit_records": timedelta(days=1),
    # Audit records not yet offered to the webhooks, and deliveries lost with their worker.
    "webhooks.tasks.sweep_webhooks": timedelta(minutes=1),
}


def schedule_periodic_tasks() -> list[str]:
    """Enqueue the next run of each periodic task that has none waiting; the paths enqueued."""
    return [
        path
        for path, every in PERIODIC_TASKS.items()
        if _schedule_next_run(import_string(path), every=every)
    ]


def _schedule_next_run(task: Task, *, every: timedelta) -> bool:
    with transaction.atomic():
        recorded = PeriodicTask.objects.select_for_update().filter(path=task.module_path).first()
        if recorded is not None and _is_waiting(task, recorded.next_run_id):
            return False
        run_at = timezone.now() + every
        result = task.using(run_after=run_at).enqueue()
        PeriodicTask.objects.update_or_create(
            path=task.module_path, defaults={"next_run_id": result.id, "next_run_at": run_at}
        )
    return True


def _is_waiting(task: Task, result_id: str) -> bool:
    try:
        return task.get_result(result_id).status == TaskResultStatus.READY
    except TaskResultDoesNotExist:  # pruned, or never there
        return False
