from decimal import Decimal

from django.db import migrations

# (code, name, general-admission price, share of an event's price, check proof at the door)
DEFAULTS = [
    ("adult", "Adult", Decimal("15.00"), 100, False),
    ("child", "Child (6-17)", Decimal("7.50"), 50, True),
    ("student", "Student", Decimal("10.00"), 75, True),
    ("senior", "Senior (65+)", Decimal("12.00"), 80, True),
    ("infant", "Infant (under 6)", Decimal("0.00"), 0, True),
]


def create_defaults(apps, schema_editor):
    VisitorCategory = apps.get_model("orders", "VisitorCategory")
    for ordering, (code, name, price, percent, check) in enumerate(DEFAULTS):
        VisitorCategory.objects.get_or_create(
            category=code,
            defaults={
                "name": name,
                "general_price": price,
                "event_price_percent": percent,
                "check_at_door": check,
                "ordering": ordering,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("orders", "0001_initial")]

    operations = [migrations.RunPython(create_defaults, migrations.RunPython.noop)]
