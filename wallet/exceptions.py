"""The wallet's problems."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import NotFound


class WalletNotConfigured(NotFound):
    """The museum has not set up this wallet's certificates (docs/wallet.md): no pass, as if
    there were none, so clients leave the link out."""

    default_code = "wallet_not_configured"
    title = _("Wallet not configured")
    default_detail = _("The museum does not offer passes for this wallet.")
