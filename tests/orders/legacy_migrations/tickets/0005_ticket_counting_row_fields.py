import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('events', '0003_indexes_for_reads'),
        ('hours', '0002_museumday_capacity_museumday_sold_and_more'),
        ('tickets', '0004_outboxemail_task_result_id'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='ticket',
            name='event_date',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to='events.eventdate'),
        ),
        migrations.AddField(
            model_name='ticket',
            name='museum_day',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to='hours.museumday'),
        ),
    ]
