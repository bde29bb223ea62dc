"""django_walletpass as this project installs it (INSTALLED_APPS names this config)."""

from django.db.models.signals import post_save
from django_walletpass.apps import DjangoWalletpassConfig


class WalletpassConfig(DjangoWalletpassConfig):
    """The library's app with the keys its own migrations made (AutoField): the project's
    DEFAULT_AUTO_FIELD (BigAutoField) would otherwise ask for a migration of the library's
    tables that only the library may write.

    Without its push on every save of a Pass: the library pushes to APNs from post_save, in the
    request and inside the saving transaction, so an APNs outage would fail the request and a
    rolled-back change would still be pushed. Pushes are to be tasks run after commit."""

    default_auto_field = "django.db.models.AutoField"

    def ready(self):
        super().ready()
        from django_walletpass import signals
        from django_walletpass.models import Pass

        post_save.disconnect(signals.send_push_notification, sender=Pass)
