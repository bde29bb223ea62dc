from django.apps import AppConfig, apps
from django.contrib.auth import get_user_model
from django.db.models import Model
from django.db.models.signals import ModelSignal, m2m_changed, post_delete, post_migrate, post_save


class MuseumConfig(AppConfig):
    name = "museum"
    verbose_name = "Museum"

    def ready(self):
        from django.contrib.auth.models import Group, Permission

        from museum import authentication, checks

        checks.register()
        # The accounts kept with remembered credentials (museum/authentication.py) are stale
        # after any change to an account, a group, a permission or who holds which. A group's
        # deletion sends no m2m_changed for its members.
        user_model = get_user_model()
        through = [user_model.groups.through, user_model.user_permissions.through]
        changes: list[tuple[ModelSignal, type[Model]]] = [
            (signal, model)
            for signal in (post_save, post_delete)
            for model in (user_model, Group, Permission)
        ]
        changes += [(m2m_changed, model) for model in (*through, Group.permissions.through)]
        for signal, sender in changes:
            signal.connect(authentication.forget_kept_accounts, sender=sender)
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
