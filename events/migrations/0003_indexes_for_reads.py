# The list of events reads the dates in a range and the events they belong to: one index on
# (date, event) serves that as an index-only scan and replaces the index on date alone.
# The new index is built before the old one goes, so reads always have one.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('events', '0002_eventdate_capacity_eventdate_sold_and_more'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='eventdate',
            index=models.Index(fields=['date', 'event'], name='event_dates_in_range'),
        ),
        migrations.AlterField(
            model_name='eventdate',
            name='date',
            field=models.DateField(),
        ),
    ]
