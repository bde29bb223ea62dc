"""The API's Google Wallet operations: the save link of a ticket's, a member card's or a gift
card's pass, as JSON for API clients or as a redirect for a browser that follows a link to it.
One view and one schema for the three: each names only its selector (who may have the pass, the
same as for its Apple pass) and its pass."""

from django.http import HttpResponseRedirect
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from giftcards.selectors import printable_card
from museum.errors import PROBLEM_CONTENT_TYPE as PROBLEM
from museum.query import StrictQueryParameters
from museum.renderers import MuseumJSONRenderer
from museum.schema import ErrorSerializer, problems
from orders.selectors import printable_membership
from tickets.selectors import viewable_ticket
from wallet import google
from wallet.exceptions import WalletNotConfigured


class RedirectRenderer(BaseRenderer):
    """Lets a browser ask for text/html, which is answered with a redirect to the save link;
    problems on this view are still JSON (the exception handler types them)."""

    media_type = "text/html"
    format = "html"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return MuseumJSONRenderer().render(data, accepted_media_type, renderer_context)


SAVE_LINK = inline_serializer(
    "GoogleWalletLink",
    {
        "saveUrl": serializers.URLField(
            help_text="Google's save link (https://pay.google.com/gp/v/save/...): opened on a "
            "phone, it adds the pass to Google Wallet."
        )
    },
)


def link_schema(*, operation_id: str, summary: str, what: str, refusals: str, tag: str, path: str):
    """The schema of a save link's operation: only what is shown, who gets it and the
    refusals differ between the three."""
    return extend_schema_view(
        get=extend_schema(
            operation_id=operation_id,
            summary=summary,
            description=(
                f"Saves {what} in Google Wallet's API (or updates it to what it shows now) and "
                "answers the link that adds it to a visitor's Google Wallet: `saveUrl` as JSON, "
                "or a 302 redirect to it when the client accepts `text/html` (a browser "
                f"following a link). {refusals} A museum without Google Wallet set up answers "
                "404 `wallet_not_configured`; Google failing or slow, 503 `wallet_unavailable` "
                "with Retry-After."
            ),
            tags=[tag],
            parameters=[
                OpenApiParameter(path, OpenApiTypes.UUID, OpenApiParameter.PATH),
                OpenApiParameter(
                    "Location",
                    OpenApiTypes.URI,
                    OpenApiParameter.HEADER,
                    description="The save link.",
                    response=[302],
                ),
            ],
            responses={
                (200, "application/json"): SAVE_LINK,
                (302, "text/html"): OpenApiResponse(
                    description="A browser is sent on to the save link (`Location`)."
                ),
                **problems(401, 404, 409),
                (503, PROBLEM): OpenApiResponse(
                    ErrorSerializer,
                    "Unavailable: Google Wallet (`wallet_unavailable`), the database or the "
                    "cache; retry after Retry-After seconds.",
                ),
            },
        )
    )


class GoogleWalletLinkView(StrictQueryParameters, APIView):
    """A pass's save link: `owner` is what the asker may add (a ticket, a membership, a gift
    card), or refuses as the pass's Apple download does."""

    renderer_classes = [MuseumJSONRenderer, RedirectRenderer]

    def owner(self, request, pk) -> google.Owner:
        raise NotImplementedError

    def get(self, request, **path):
        # Before anything is looked up: without Google Wallet nothing is asked about.
        if not google.is_configured():
            raise WalletNotConfigured()
        # The one path parameter, whatever the view names it (ticketId, membershipId, ...).
        (pk,) = path.values()
        url = google.save_pass(self.owner(request, pk))
        if request.accepted_renderer.media_type == RedirectRenderer.media_type:
            return HttpResponseRedirect(url)
        return Response({"saveUrl": url})


@link_schema(
    operation_id="getTicketGoogleWalletLink",
    summary="Get a ticket's Add to Google Wallet link",
    what="the ticket's pass",
    refusals=(
        "The pass carries the ticket's signed QR token, which the door admits as the PDF's. Only "
        "its buyer and staff get it; anyone else gets 404. A ticket of an order not paid has "
        "none: 409 `not_paid`."
    ),
    tag="Tickets",
    path="ticketId",
)
class TicketGoogleWalletView(GoogleWalletLinkView):
    def owner(self, request, pk) -> google.Owner:
        return viewable_ticket(ticket_id=pk, viewer=request.user)


@link_schema(
    operation_id="getMembershipGoogleWalletLink",
    summary="Get a member card's Add to Google Wallet link",
    what="the member's card as a pass",
    refusals=(
        "The pass shows the holder's name, the type, the last valid day and the card's code, "
        "its QR code the card's token the door reads; it is inactive once the membership is "
        "cancelled or expired. For whoever may have the card (its buyer and staff): anyone else "
        "gets 404; a membership not paid yet (or a gift not redeemed yet) or cancelled has "
        "none: 409 `no_membership_card`."
    ),
    tag="Memberships",
    path="membershipId",
)
class MembershipGoogleWalletView(GoogleWalletLinkView):
    def owner(self, request, pk) -> google.Owner:
        return printable_membership(membership_id=pk, viewer=request.user)


@link_schema(
    operation_id="getGiftCardGoogleWalletLink",
    summary="Get a gift card's Add to Google Wallet link",
    what="the gift card as a pass",
    refusals=(
        "The pass shows what the card holds now and the last day it may be spent, its QR code "
        "the card's code the desk scans; it is inactive once nothing is left on it or it "
        "expired. For its buyer and staff; anyone else gets 404. A card whose order is not paid "
        "yet has none: 409 `gift_card_not_issued`."
    ),
    tag="Gift cards",
    path="giftCardId",
)
class GiftCardGoogleWalletView(GoogleWalletLinkView):
    def owner(self, request, pk) -> google.Owner:
        return printable_card(card_id=pk, viewer=request.user)
