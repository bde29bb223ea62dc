"""The sale's periodic jobs, run by the task worker (museum/periodic.py schedules them)."""

from django_tasks import task

from museum.periodic import schedule_periodic_tasks
from orders.services.holds import release_expired_holds as release_holds
from orders.services.memberships import expire_lapsed, send_renewal_reminders
from orders.services.personal_data import anonymise_old_memberships, anonymise_old_orders


@task()
def release_expired_holds() -> int:
    """Give back the places of holds that ran out; how many orders."""
    schedule_periodic_tasks()
    return release_holds()


@task()
def anonymise_orders() -> int:
    """Replace buyers' email and phone on orders past MUSEUM_PERSONAL_DATA_RETENTION_DAYS."""
    schedule_periodic_tasks()
    return anonymise_old_orders() + anonymise_old_memberships()


@task()
def expire_memberships() -> int:
    """Mark memberships whose last day has passed expired; how many."""
    schedule_periodic_tasks()
    return expire_lapsed()


@task()
def remind_members() -> int:
    """Enqueue the renewal reminders due; how many."""
    schedule_periodic_tasks()
    return send_renewal_reminders()
