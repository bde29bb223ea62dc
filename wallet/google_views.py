"""The API's Google Wallet operations: a ticket's save link, as JSON for API clients or as a
redirect for a browser that follows a link to it."""

from django.http import HttpResponseRedirect
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from museum.errors import PROBLEM_CONTENT_TYPE
from museum.query import StrictQueryParameters
from museum.renderers import MuseumJSONRenderer
from museum.schema import ErrorSerializer, problems
from tickets import selectors
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


class TicketGoogleWalletView(StrictQueryParameters, APIView):
    renderer_classes = [MuseumJSONRenderer, RedirectRenderer]

    @extend_schema(
        operation_id="getTicketGoogleWalletLink",
        summary="Get a ticket's Add to Google Wallet link",
        description=(
            "Saves the ticket's pass in Google Wallet's API (or updates it to what the ticket "
            "shows now: a moved or cancelled ticket) and answers the link that adds it to a "
            "visitor's Google Wallet: `saveUrl` as JSON, or a 302 redirect to it when the "
            "client accepts `text/html` (a browser following a link). The pass carries the "
            "ticket's signed QR token, which the door admits as the PDF's. Only its buyer and "
            "staff get it; anyone else gets 404. A ticket of an order not paid has none: 409 "
            "`not_paid`. A museum without Google Wallet set up answers 404 "
            "`wallet_not_configured`; Google failing or slow, 503 `wallet_unavailable` with "
            "Retry-After."
        ),
        tags=["Tickets"],
        parameters=[
            OpenApiParameter("ticketId", OpenApiTypes.UUID, OpenApiParameter.PATH),
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
            (503, PROBLEM_CONTENT_TYPE): OpenApiResponse(
                ErrorSerializer,
                "Unavailable: Google Wallet (`wallet_unavailable`), the database or the cache; "
                "retry after Retry-After seconds.",
            ),
        },
    )
    def get(self, request, ticketId):
        # Before the ticket is looked for: without Google Wallet no ticket is asked about.
        if not google.is_configured():
            raise WalletNotConfigured()
        ticket = selectors.viewable_ticket(ticket_id=ticketId, viewer=request.user)
        url = google.ticket_save_link(ticket=ticket)
        if request.accepted_renderer.media_type == RedirectRenderer.media_type:
            return HttpResponseRedirect(url)
        return Response({"saveUrl": url})
