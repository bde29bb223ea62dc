from django.apps import AppConfig, apps
from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_migrate, post_save


class MuseumConfig(AppConfig):
    name = "museum"
    verbose_name = "Museum"

    def ready(self):
        from museum import checks
        from museum.authentication import forget_accounts_on_change

        checks.register()
        for signal in (post_save, post_delete):
            signal.connect(
                forget_accounts_on_change,
                sender=get_user_model(),
                dispatch_uid="museum:forget-accounts-on-change",
            )
        post_migrate.connect(after_migrate, sender=self, dispatch_uid="museum:role-groups")
        post_migrate.connect(
            schedule_after_migrate, sender=self, dispatch_uid="museum:periodic-tasks"
        )


def after_migrate(sender, using, **kwargs):
    """After every migrate, each role's group exists with exactly the role's permissions.

    The roles are defined in code (museum/accounts.py), so a deployment gets them, and any change
    to them, by migrating; a museum that wants other rights makes a group of its own.
    """
    from django.contrib.auth.management import create_permissions

    from museum.accounts import ROLES, sync_role_groups

    # post_migrate reaches this app before the apps whose permissions the roles name.
    labels = {name.split(".")[0] for names in ROLES.values() for name in names}
    for label in sorted(labels):
        create_permissions(apps.get_app_config(label), verbosity=0, using=using)
    sync_role_groups()


def schedule_after_migrate(sender, using, **kwargs):
    """After every migrate, each periodic task has its next run waiting (museum/periodic.py)."""
    from museum.periodic import schedule_periodic_tasks

    # `apps` is the migrated state (flush sends none): not after migrating back to before the
    # tables the schedule needs.
    migrated = kwargs.get("apps", apps)
    try:
        migrated.get_model("museum", "PeriodicTask")
        migrated.get_model("django_tasks_database", "DBTaskResult")
    except LookupError:
        return
    schedule_periodic_tasks()
