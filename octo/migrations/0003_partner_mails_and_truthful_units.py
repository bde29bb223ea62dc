"""A partner's switch for the museum's mail to its customers (off: the reseller delivers the
tickets), and OCTO units that say only what the museum set: ages may be empty (none set), and
`idRequired` is its own field rather than every category checked at the door.

Existing units keep their ages, and their `id_required` starts as their category's "check proof at
the door": for a category staff mapped on purpose, that is the answer resellers have been reading,
and it was the museum's own word that the door checks proof, so keeping it surprises no one and
says nothing the museum did not. Categories nobody mapped have no row: they now say
`idRequired: false` until staff map them and tick it, which is the change the issue asks for (the
default categories checked at the door, a child's among them, all said true).

The new columns have database defaults, so that the code still running during a deploy, which
does not know them, can insert rows.
"""

from django.db import migrations, models


def id_required_as_checked_at_door(apps, schema_editor):
    CategoryUnit = apps.get_model("octo", "CategoryUnit")
    CategoryUnit.objects.filter(category__check_at_door=True).update(id_required=True)


class Migration(migrations.Migration):

    dependencies = [
        ("octo", "0002_booking_uuid_per_partner"),
    ]

    operations = [
        migrations.AddField(
            model_name="categoryunit",
            name="id_required",
            field=models.BooleanField(
                default=False,
                db_default=False,
                help_text=(
                    "The visitor must show proof at the door, e.g. a student card (OCTO's "
                    "idRequired)."
                ),
                verbose_name="ID required",
            ),
        ),
        migrations.RunPython(id_required_as_checked_at_door, migrations.RunPython.noop),
        migrations.AddField(
            model_name="partnerterms",
            name="museum_sends_tickets",
            field=models.BooleanField(
                default=False,
                db_default=False,
                help_text=(
                    "Email the booking's contact the museum's confirmation (with the tickets' "
                    "PDF) and cancellation, as for the museum's own visitors. Off: the partner "
                    "delivers the tickets itself and the museum mails its customers nothing."
                ),
                verbose_name="the museum sends tickets",
            ),
        ),
        migrations.AlterField(
            model_name="categoryunit",
            name="max_age",
            field=models.PositiveSmallIntegerField(
                blank=True, help_text="Empty: the museum sets no highest age.", null=True
            ),
        ),
        migrations.AlterField(
            model_name="categoryunit",
            name="min_age",
            field=models.PositiveSmallIntegerField(
                blank=True, help_text="Empty: the museum sets no lowest age.", null=True
            ),
        ),
        migrations.AddConstraint(
            model_name="categoryunit",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("min_age__isnull", True),
                    ("max_age__isnull", True),
                    ("min_age__lte", models.F("max_age")),
                    _connector="OR",
                ),
                name="octo_unit_ages_in_order",
                violation_error_message="The lowest age is at most the highest.",
            ),
        ),
    ]
