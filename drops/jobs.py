"""Drops' periodic job, run by the task worker (museum/periodic.py schedules it)."""

from django_tasks import task

from drops import waiting_list
from museum.periodic import schedule_periodic_tasks


@task()
def tend_drops() -> int:
    """Every drop on (or closed less than a day ago) counts its places again, and offers those
    that came back (an offer run out unused among them) to its waiting list; the waiting lists
    of drops long closed are forgotten. How many entries were offered."""
    schedule_periodic_tasks()
    offered = waiting_list.tend()
    waiting_list.forget_waiting_lists()
    return offered
