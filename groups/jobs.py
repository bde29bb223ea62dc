"""Groups' periodic jobs, run by the task worker (museum/periodic.py schedules them)."""

from django_tasks import task

from groups.services.money import remind_groups as remind
from groups.services.requests import expire_requests
from museum.periodic import schedule_periodic_tasks


@task()
def expire_group_requests() -> int:
    """Requests unanswered past their date give their places back; how many."""
    schedule_periodic_tasks()
    return expire_requests()


@task()
def remind_groups() -> int:
    """Reminders of deposits and balances falling due; how many."""
    schedule_periodic_tasks()
    return remind()
