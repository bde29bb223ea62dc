import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("tickets", "0010_every_ticket_in_an_order")]

    operations = [
        # Blank first, so that the reverse can add the column back to a table with rows (the
        # reverse of the data migration before this one then fills it from the orders).
        migrations.AlterField(
            model_name="ticket", name="email", field=models.EmailField(blank=True, max_length=254)
        ),
        migrations.RemoveField(model_name="ticket", name="email"),
        migrations.RemoveField(model_name="ticket", name="phone"),
        migrations.AlterField(
            model_name="ticket",
            name="order",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="tickets",
                to="orders.order",
            ),
        ),
        migrations.DeleteModel(name="OutboxEmail"),
    ]
