"""The wallet's problems."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem, NotFound


class WalletNotConfigured(NotFound):
    """The museum has not set up this wallet's certificates (docs/wallet.md): no pass, as if
    there were none, so clients leave the link out."""

    default_code = "wallet_not_configured"
    title = _("Wallet not configured")
    default_detail = _("The museum does not offer passes for this wallet.")


class WalletUnavailable(MuseumProblem):
    """A wallet's provider (Google Wallet's API) failed us or did not answer in time: nothing
    was saved, and the visitor may ask again."""

    kind = "unavailable"
    default_code = "wallet_unavailable"
    title = _("Service Unavailable")
    default_detail = _("The wallet cannot be reached for a moment. Please try again shortly.")
    retry_after = 30


class WalletRefused(WalletUnavailable):
    """Google refused a call for good (a 4xx other than 429: a pass it cannot take, or a service
    account it does not let write): asking again would be refused again. To a visitor, the
    wallet is away all the same."""
