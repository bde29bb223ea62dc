"""The pages behind the wallet links of the emails and the desk (wallet/links.py):
`/wallet/add/{signed}/apple` answers the pass (.pkpass) and `/wallet/add/{signed}/google` sends
the browser on to Google's save link. No account: the signed link is the grant. A link not
signed by us is a 404; what has no pass now is refused as the API refuses it (409 `not_paid`,
`no_membership_card`, `gift_card_not_issued`), as problem+json. Limited per client address
(MUSEUM_THROTTLE_WALLET_LINK_RATE)."""

from django.http import Http404, HttpResponseRedirect
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from museum.renderers import MuseumJSONRenderer
from museum.throttling import WalletLinkRateThrottle
from wallet import apple, google, links
from wallet.exceptions import WalletNotConfigured
from wallet.google_views import RedirectRenderer
from wallet.views import PKPassRenderer, pkpass_response


class WalletLinkPage(APIView):
    """What both pages share: no account, problems as the API's, the links' own rate."""

    authentication_classes: tuple = ()
    permission_classes = (AllowAny,)
    throttle_classes = (WalletLinkRateThrottle,)
    # A page for a link in an email, not an operation of the API: outside its schema.
    schema = None

    def named(self, signed: str):
        named = links.named_by(signed)
        if named is None:
            raise Http404()
        return named


class AppleWalletLinkPage(WalletLinkPage):
    renderer_classes = (MuseumJSONRenderer, PKPassRenderer)

    def get(self, request, signed: str):
        kind, owner_id = self.named(signed)
        apple.refuse_unless_configured()
        return pkpass_response(request, apple.pass_of(links.owner_of(kind, owner_id)))


class GoogleWalletLinkPage(WalletLinkPage):
    renderer_classes = (MuseumJSONRenderer, RedirectRenderer)

    def get(self, request, signed: str):
        kind, owner_id = self.named(signed)
        if not google.is_configured():
            raise WalletNotConfigured()
        return HttpResponseRedirect(google.save_pass(links.owner_of(kind, owner_id)))
