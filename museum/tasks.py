"""The project's periodic housekeeping tasks (museum/periodic.py schedules them)."""

from django.core.management import call_command
from django_tasks import task

from museum.idempotency import purge_expired_keys
from museum.periodic import schedule_periodic_tasks

# Finished task results stay this long for staff to look at in the admin; then they go.
TASK_RESULTS_KEPT_DAYS = 30


@task()
def purge_idempotency_keys() -> int:
    """Delete expired Idempotency-Keys; how many."""
    schedule_periodic_tasks()
    return purge_expired_keys()


@task()
def prune_task_results() -> None:
    """Delete finished task results older than TASK_RESULTS_KEPT_DAYS (the backend's command)."""
    schedule_periodic_tasks()
    # It logs how many it deleted, to the worker's output.
    call_command("prune_db_task_results", min_age_days=TASK_RESULTS_KEPT_DAYS)
