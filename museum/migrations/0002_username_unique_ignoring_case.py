from django.db import migrations

INDEX = "auth_user_username_lower_unique"


def refuse_case_duplicates(apps, schema_editor):
    # The index below cannot be built over them; name them rather than fail with an SQL error.
    User = apps.get_model("auth", "User")
    seen, clashes = {}, []
    for username in User.objects.values_list("username", flat=True).order_by("pk"):
        first = seen.setdefault(username.lower(), username)
        if first != username:
            clashes.append(f"{first!r} and {username!r}")
    if clashes:
        raise RuntimeError(
            "Usernames that differ only in case: " + "; ".join(clashes) + ". Rename all but "
            "one of each (e.g. in the admin) and migrate again."
        )


class Migration(migrations.Migration):
    """Two accounts may not have usernames that differ only in case ('ada' and 'Ada')."""

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("museum", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(refuse_case_duplicates, migrations.RunPython.noop),
        # auth_user belongs to django.contrib.auth, whose models we cannot give a constraint;
        # this SQL is the same on SQLite and PostgreSQL.
        migrations.RunSQL(
            f"CREATE UNIQUE INDEX {INDEX} ON auth_user (LOWER(username))",
            reverse_sql=f"DROP INDEX {INDEX}",
        ),
    ]
