"""django_walletpass as this project installs it (INSTALLED_APPS names this config)."""

from django_walletpass.apps import DjangoWalletpassConfig


class WalletpassConfig(DjangoWalletpassConfig):
    """The library's app with the keys its own migrations made (AutoField): the project's
    DEFAULT_AUTO_FIELD (BigAutoField) would otherwise ask for a migration of the library's
    tables that only the library may write."""

    default_auto_field = "django.db.models.AutoField"
