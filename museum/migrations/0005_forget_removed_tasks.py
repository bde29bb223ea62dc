"""Tasks whose code is gone (the tickets' own email pipeline, the sale's periodic jobs now in
orders.jobs) are no longer waited for: their waiting runs and their periodic records go, so the
worker never meets a task it cannot import, and the jobs run under their new paths."""

from django.db import migrations

REMOVED = [
    "tickets.tasks.send_confirmation_email",
    "tickets.tasks.resend_lost_confirmations",
    "tickets.tasks.anonymise_tickets",
    "orders.tasks.release_expired_holds",
    "orders.tasks.anonymise_orders",
]


def forget_removed_tasks(apps, schema_editor):
    apps.get_model("museum", "PeriodicTask").objects.filter(path__in=REMOVED).delete()
    waiting = apps.get_model("django_tasks_database", "DBTaskResult").objects.filter(
        task_path__in=REMOVED, status="READY"
    )
    waiting.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("museum", "0004_idempotency_key_location"),
        ("django_tasks_database", "0021_conditional_partial_index_ordering"),
    ]

    # Nothing to put back: the code those rows named is gone.
    operations = [migrations.RunPython(forget_removed_tasks, migrations.RunPython.noop)]
