"""The sweep that catches what a lost worker left: audit records not yet offered to the
webhooks, and attempts overdue (museum/periodic.py runs it every minute). The fan-out's and the
deliveries' own tasks are webhooks.fanout.fan_out_webhooks and webhooks.delivery.deliver_webhook.
"""

from django_tasks import task

from museum.periodic import schedule_periodic_tasks
from webhooks.delivery import QUEUE, requeue_lost
from webhooks.fanout import fan_out


@task(queue_name=QUEUE)
def sweep_webhooks() -> str:
    schedule_periodic_tasks()
    made = fan_out()
    requeued = requeue_lost()
    return f"{made} deliveries made, {requeued} lost attempts enqueued again"
