from django.apps import AppConfig, apps
from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_delete, post_migrate, post_save, pre_delete


class MuseumConfig(AppConfig):
    name = "museum"
    verbose_name = "Museum"

    def ready(self):
        from django.contrib.auth.models import Group, Permission

        from museum import authentication, checks

        checks.register()
        user_model = get_user_model()
        for signal in (post_save, post_delete):
            signal.connect(
                authentication.forget_accounts_on_change,
                sender=user_model,
                dispatch_uid="museum:forget-accounts-on-change",
            )
        # The permissions kept with an account (museum/authentication.py), wherever they change.
        for through in (
            user_model.groups.through,
            user_model.user_permissions.through,
            Group.permissions.through,
        ):
            m2m_changed.connect(
                authentication.forget_accounts_on_permission_change,
                sender=through,
                dispatch_uid=f"museum:forget-accounts-on-permission-change:{through.__name__}",
            )
        pre_delete.connect(
            authentication.forget_accounts_on_group_delete,
            sender=Group,
            dispatch_uid="museum:forget-accounts-on-group-delete",
        )
        for signal in (post_save, pre_delete):
            signal.connect(
                authentication.forget_accounts_on_permission_save_or_delete,
                sender=Permission,
                dispatch_uid="museum:forget-accounts-on-permission-save-or-delete",
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
