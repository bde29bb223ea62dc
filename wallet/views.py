"""The API's wallet passes of a ticket, a member card and a gift card: Apple's .pkpass (Google's
save link joins it here)."""

from django.http import HttpResponse
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import http_date, quote_etag
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.views import APIView

from giftcards.selectors import printable_card
from museum.query import StrictQueryParameters
from museum.renderers import MuseumJSONRenderer, PNGRenderer
from museum.schema import problems
from orders.selectors import printable_membership
from tickets.selectors import viewable_ticket
from wallet import apple
from wallet.content import GIFT_CARD, MEMBERSHIP, TICKET
from wallet.models import ApplePass


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
        return pkpass_response(request, apple.ticket_apple_pass(ticket=ticket))


# The download's file name, by whose pass it is.
FILE_NAMES = {TICKET: "ticket", MEMBERSHIP: "member-card", GIFT_CARD: "gift-card"}


def pkpass_response(request, kept: ApplePass):
    """The kept pass as a download, revalidated by Last-Modified and ETag (a 304 then). A gift
    card's is kept by no cache on the way: its code spends the card, as its PDF's does."""
    response = HttpResponse(bytes(kept.pkpass), content_type=apple.PKPASS)
    response["Content-Disposition"] = f'attachment; filename="{FILE_NAMES[kept.kind]}.pkpass"'
    modified = int(kept.pazz.updated_at.timestamp())
    response["Last-Modified"] = http_date(modified)
    # Asked again each time: a cancellation must reach the next download.
    patch_cache_control(response, private=True, no_cache=True)
    if kept.kind == GIFT_CARD:
        patch_cache_control(response, no_store=True)
    # Last-Modified counts seconds: the ETag tells two builds within one second apart.
    response["ETag"] = quote_etag(kept.fingerprint[:32])
    return get_conditional_response(
        request, etag=response["ETag"], last_modified=modified, response=response
    )


class MembershipAppleWalletPassView(StrictQueryParameters, APIView):
    renderer_classes = [MuseumJSONRenderer, PKPassRenderer]

    @extend_schema(
        operation_id="getMembershipAppleWalletPass",
        summary="Get the member's card as an Apple Wallet pass",
        description=(
            "The member's card as a signed Apple Wallet pass (.pkpass, a store card) in the "
            "membership's language: the holder's name, the type, the last valid day and the "
            "card's code, its barcode the card's token the door reads (a replaced card's pass "
            "no longer admits: download it again). Updated by Apple's web service when what it "
            "shows changes (a renewal); voided once the membership is cancelled or expired. "
            "For whoever may have the card (its buyer and staff): anyone else gets 404; a "
            "membership not paid yet (or a gift not redeemed yet) or cancelled has none: 409 "
            "`no_membership_card`. 404 `wallet_not_configured` while the museum offers no "
            "Apple passes. `Last-Modified` and `ETag` revalidate it."
        ),
        tags=["Memberships"],
        parameters=[OpenApiParameter("membershipId", OpenApiTypes.UUID, OpenApiParameter.PATH)],
        responses={
            (200, apple.PKPASS): OpenApiResponse(OpenApiTypes.BINARY, "The card's pass."),
            **problems(401, 404, 409),
        },
    )
    def get(self, request, membershipId):
        apple.refuse_unless_configured()
        membership = printable_membership(membership_id=membershipId, viewer=request.user)
        kept = apple.membership_apple_pass(membership=membership)
        return pkpass_response(request, kept)


class GiftCardAppleWalletPassView(StrictQueryParameters, APIView):
    renderer_classes = [MuseumJSONRenderer, PKPassRenderer]

    @extend_schema(
        operation_id="getGiftCardAppleWalletPass",
        summary="Get the gift card as an Apple Wallet pass",
        description=(
            "The gift card as a signed Apple Wallet pass (.pkpass, a store card) in the card's "
            "language: what it holds now and the last day it may be spent, its barcode the "
            "card's code the desk scans. Updated by Apple's web service when what it shows "
            "changes (each payment with it); voided once nothing is left on it or it expired. "
            "For its buyer and staff; anyone else gets 404. A card whose order is not paid yet "
            "has none: 409 `gift_card_not_issued`. 404 `wallet_not_configured` while the "
            "museum offers no Apple passes. `Last-Modified` and `ETag` revalidate it."
        ),
        tags=["Gift cards"],
        parameters=[OpenApiParameter("giftCardId", OpenApiTypes.UUID, OpenApiParameter.PATH)],
        responses={
            (200, apple.PKPASS): OpenApiResponse(OpenApiTypes.BINARY, "The card's pass."),
            **problems(401, 404, 409),
        },
    )
    def get(self, request, giftCardId):
        apple.refuse_unless_configured()
        card = printable_card(card_id=giftCardId, viewer=request.user)
        kept = apple.gift_card_apple_pass(card=card)
        return pkpass_response(request, kept)
