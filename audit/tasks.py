"""The audit log's housekeeping (museum/periodic.py schedules it)."""

from django_tasks import task

from audit.services import purge_old_records
from museum.periodic import schedule_periodic_tasks


@task()
def purge_audit_records() -> int:
    """Delete the records older than MUSEUM_AUDIT_RETENTION_DAYS; how many."""
    schedule_periodic_tasks()
    return purge_old_records()
