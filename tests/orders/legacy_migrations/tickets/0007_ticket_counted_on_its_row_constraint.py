from django.db import migrations, models


class Migration(migrations.Migration):
    # Apart from the data migration: on PostgreSQL a table with pending (deferred) foreign-key
    # checks from that migration's updates cannot be altered in the same transaction.

    dependencies = [
        ("tickets", "0006_fill_ticket_counting_rows"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='ticket',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('event_date__isnull', False), ('museum_day__isnull', True), ('ticket_type', 'event')), models.Q(('event_date__isnull', True), ('museum_day', models.F('date')), ('ticket_type', 'general')), _connector='OR'), name='ticket_counted_on_its_row'),
        ),
    ]
