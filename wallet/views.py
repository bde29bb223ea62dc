"""The API's wallet passes of a ticket: Apple's .pkpass (Google's save link joins it here)."""

from django.http import HttpResponse
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import http_date, quote_etag
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.views import APIView

from museum.query import StrictQueryParameters
from museum.renderers import MuseumJSONRenderer, PNGRenderer
from museum.schema import problems
from tickets.selectors import viewable_ticket
from wallet import apple


class PKPassRenderer(PNGRenderer):
    """Lets a client ask for a .pkpass; problems on this view are still JSON (PNGRenderer's)."""

    media_type = apple.PKPASS
    format = "pkpass"


class TicketAppleWalletPassView(StrictQueryParameters, APIView):
    renderer_classes = [MuseumJSONRenderer, PKPassRenderer]

    @extend_schema(
        operation_id="getTicketAppleWalletPass",
        summary="Get the ticket as an Apple Wallet pass",
        description=(
            "The ticket as a signed Apple Wallet pass (.pkpass) in its order's language, its "
            "barcode the QR token the door reads, updated by Apple's web service when what it "
            "shows changes (a cancelled ticket's pass is voided). Seen by those who see the "
            "ticket's QR code: anyone else gets 404, a ticket of an order not paid 409 "
            "`not_paid`. 404 `wallet_not_configured` while the museum offers no Apple passes. "
            "`Last-Modified` and `ETag` revalidate it (`If-Modified-Since`, `If-None-Match`)."
        ),
        tags=["Tickets"],
        parameters=[OpenApiParameter("ticketId", OpenApiTypes.UUID, OpenApiParameter.PATH)],
        responses={
            (200, apple.PKPASS): OpenApiResponse(OpenApiTypes.BINARY, "The ticket's pass."),
            **problems(401, 404, 409),
        },
    )
    def get(self, request, ticketId):
        apple.refuse_unless_configured()
        ticket = viewable_ticket(ticket_id=ticketId, viewer=request.user)
        kept = apple.ticket_apple_pass(ticket=ticket)
        response = HttpResponse(bytes(kept.pkpass), content_type=apple.PKPASS)
        response["Content-Disposition"] = 'attachment; filename="ticket.pkpass"'
        modified = int(kept.pazz.updated_at.timestamp())
        response["Last-Modified"] = http_date(modified)
        # Asked again each time: a cancellation must reach the next download.
        patch_cache_control(response, private=True, no_cache=True)
        # Last-Modified counts seconds: the ETag tells two builds within one second apart.
        response["ETag"] = quote_etag(kept.fingerprint[:32])
        return get_conditional_response(
            request, etag=response["ETag"], last_modified=modified, response=response
        )
