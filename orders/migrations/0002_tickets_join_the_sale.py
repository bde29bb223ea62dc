"""The ticket and its kept image belong to the sale: their content types (and so the
permissions staff groups hold, such as check_in_ticket) and their audit records move from the
tickets app to this one. Their tables stay where they are (0001)."""

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder

MOVED = ["ticket", "ticketimage"]
# The last migration of the tickets app before it gave its models to the sale.
TICKETS_LAST = ("tickets", "0012_ticket_cancelled_by")


def refuse_a_partly_migrated_database(apps, schema_editor):
    """A database the tickets app's migrations had begun on but not finished lacks columns
    that 0001 counts as there: it must first be migrated by a release that has them all."""
    applied = MigrationRecorder(schema_editor.connection).applied_migrations()
    began = any(app == "tickets" for app, _ in applied)
    if began and TICKETS_LAST not in applied:
        raise RuntimeError(
            "The tickets app's migrations are only partly applied: migrate with the release "
            "that still has them (up to tickets 0012) first."
        )


def move(apps, *, source, target):
    ContentType = apps.get_model("contenttypes", "ContentType")
    AuditRecord = apps.get_model("audit", "AuditRecord")
    for model in MOVED:
        if not ContentType.objects.filter(app_label=target, model=model).exists():
            ContentType.objects.filter(app_label=source, model=model).update(app_label=target)
        AuditRecord.objects.filter(object_type=f"{source}.{model}").update(
            object_type=f"{target}.{model}"
        )


def forwards(apps, schema_editor):
    refuse_a_partly_migrated_database(apps, schema_editor)
    move(apps, source="tickets", target="orders")


def backwards(apps, schema_editor):
    move(apps, source="orders", target="tickets")


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0001_audit_log"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("orders", "0001_squashed_0008_order_language"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
