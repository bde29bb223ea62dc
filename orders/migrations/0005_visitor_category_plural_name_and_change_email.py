"""A visitor category's name for several ("Adults") beside its name for one, in every shipped
language, so that the email counts visitors right ("1 Erwachsener", "2 Erwachsene"). The default
categories get both; a name the museum changed is left as it is. And the email after a change of
an order, a kind of email to a buyer of its own."""

from django.conf import settings
from django.db import migrations, models

# Per default category and language: the name it was created with, the name for one, the name
# for several.
NAMES = {
    "adult": {
        "en": ("Adult", "Adult", "Adults"),
        "de": ("Erwachsene", "Erwachsener", "Erwachsene"),
        "fr": ("Adulte", "Adulte", "Adultes"),
        "nl": ("Volwassene", "Volwassene", "Volwassenen"),
        "es": ("Adulto", "Adulto", "Adultos"),
    },
    "child": {
        "en": ("Child (6-17)", "Child (6-17)", "Children (6-17)"),
        "de": ("Kind (6-17 Jahre)", "Kind (6-17 Jahre)", "Kinder (6-17 Jahre)"),
        "fr": ("Enfant (6-17 ans)", "Enfant (6-17 ans)", "Enfants (6-17 ans)"),
        "nl": ("Kind (6-17 jaar)", "Kind (6-17 jaar)", "Kinderen (6-17 jaar)"),
        "es": ("Niño (6-17 años)", "Niño (6-17 años)", "Niños (6-17 años)"),
    },
    "student": {
        "en": ("Student", "Student", "Students"),
        "de": ("Studierende", "Studierender", "Studierende"),
        "fr": ("Étudiant", "Étudiant", "Étudiants"),
        "nl": ("Student", "Student", "Studenten"),
        "es": ("Estudiante", "Estudiante", "Estudiantes"),
    },
    "senior": {
        "en": ("Senior (65+)", "Senior (65+)", "Seniors (65+)"),
        "de": ("Senioren (ab 65)", "Senior (ab 65)", "Senioren (ab 65)"),
        "fr": ("Senior (65 ans et plus)", "Senior (65 ans et plus)", "Seniors (65 ans et plus)"),
        "nl": ("65-plusser", "65-plusser", "65-plussers"),
        "es": ("Mayor de 65 años", "Mayor de 65 años", "Mayores de 65 años"),
    },
    "infant": {
        "en": ("Infant (under 6)", "Infant (under 6)", "Infants (under 6)"),
        "de": (
            "Kleinkind (unter 6 Jahren)",
            "Kleinkind (unter 6 Jahren)",
            "Kleinkinder (unter 6 Jahren)",
        ),
        "fr": ("Enfant de moins de 6 ans", "Enfant de moins de 6 ans", "Enfants de moins de 6 ans"),
        "nl": ("Kind onder 6 jaar", "Kind onder 6 jaar", "Kinderen onder 6 jaar"),
        "es": ("Niño menor de 6 años", "Niño menor de 6 años", "Niños menores de 6 años"),
    },
}


def name_for_one_and_several(apps, schema_editor):
    """Also run by tests/conftest.py after a flush has the default categories made again."""
    VisitorCategory = apps.get_model("orders", "VisitorCategory")
    for category in VisitorCategory.objects.filter(category__in=NAMES):
        names = NAMES[category.category]
        # The plain columns hold the museum's own language's names, as modeltranslation keeps them.
        columns = [(f"_{language}", names[language]) for language in names]
        columns.append(("", names[settings.MUSEUM_LANGUAGE]))
        for suffix, (created, one, several) in columns:
            if getattr(category, f"name{suffix}") != created:
                continue  # the museum's own name: its plural is the museum's to give
            setattr(category, f"name{suffix}", one)
            setattr(category, f"plural_name{suffix}", several)
        category.save()


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0004_claimed_work"),
    ]

    operations = [
        migrations.AddField(
            model_name="visitorcategory",
            name="plural_name",
            field=models.CharField(
                blank=True,
                help_text="E.g. 'Adults'; empty: the name serves for any number.",
                max_length=100,
                verbose_name="name for several",
            ),
        ),
        migrations.AddField(
            model_name="visitorcategory",
            name="plural_name_de",
            field=models.CharField(
                blank=True,
                help_text="E.g. 'Adults'; empty: the name serves for any number.",
                max_length=100,
                null=True,
                verbose_name="name for several",
            ),
        ),
        migrations.AddField(
            model_name="visitorcategory",
            name="plural_name_en",
            field=models.CharField(
                blank=True,
                help_text="E.g. 'Adults'; empty: the name serves for any number.",
                max_length=100,
                null=True,
                verbose_name="name for several",
            ),
        ),
        migrations.AddField(
            model_name="visitorcategory",
            name="plural_name_es",
            field=models.CharField(
                blank=True,
                help_text="E.g. 'Adults'; empty: the name serves for any number.",
                max_length=100,
                null=True,
                verbose_name="name for several",
            ),
        ),
        migrations.AddField(
            model_name="visitorcategory",
            name="plural_name_fr",
            field=models.CharField(
                blank=True,
                help_text="E.g. 'Adults'; empty: the name serves for any number.",
                max_length=100,
                null=True,
                verbose_name="name for several",
            ),
        ),
        migrations.AddField(
            model_name="visitorcategory",
            name="plural_name_nl",
            field=models.CharField(
                blank=True,
                help_text="E.g. 'Adults'; empty: the name serves for any number.",
                max_length=100,
                null=True,
                verbose_name="name for several",
            ),
        ),
        migrations.RunPython(name_for_one_and_several, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="buyeremail",
            name="kind",
            field=models.CharField(
                choices=[
                    ("confirmation", "Order confirmation"),
                    ("paid_back", "Payment paid back whole"),
                    ("change", "Order changed (moved, tickets cancelled)"),
                ],
                max_length=20,
            ),
        ),
    ]
