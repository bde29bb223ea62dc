from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0003_order_confirmation_task"),
        ("tickets", "0008_ticket_order_category_slot"),
    ]

    operations = [
        migrations.AddField(
            model_name="ticket",
            name="held",
            field=models.BooleanField(default=False),
        ),
    ]
