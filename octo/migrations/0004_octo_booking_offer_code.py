"""A booking keeps the reseller's offer code (`octo/offers`), so that placing its order anew (a
rebooking, a confirmation after its hold ran out) asks the same voucher again. A database default,
so that the code still running during a deploy, which does not know it, can insert rows."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("octo", "0003_partner_mails_and_truthful_units"),
    ]

    operations = [
        migrations.AddField(
            model_name="booking",
            name="offer_code",
            field=models.CharField(blank=True, db_default="", default="", max_length=40),
        ),
    ]
