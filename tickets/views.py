from django.http import HttpResponse
from django.urls import reverse
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import quote_etag
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from museum.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from museum.permissions import MayCheckIn
from museum.query import StrictQueryParameters
from museum.renderers import MuseumJSONRenderer, PNGRenderer
from museum.schema import QUEUE_TOKEN_PARAMETER, problems
from museum.throttling import PurchaseRateThrottle
from orders import tokens
from orders.models import Ticket
from orders.services.sale import buy_ticket, sale_cache_reads
from tickets import members, selectors
from tickets.exceptions import TicketRefused
from tickets.serializers import (
    BuyMuseumTicketsRequestSerializer,
    BuyMuseumTicketsResponseSerializer,
    CheckInRequestSerializer,
    CheckInResponseSerializer,
    RefusedTicketSerializer,
    SigningKeySerializer,
)

# The owner may keep the image; revalidation with the ETag catches a later cancellation.
TICKET_IMAGE_MAX_AGE = 24 * 60 * 60


@extend_schema(tags=["Tickets"])
class PurchasesThrottled(APIView):
    """View mixin: its `create` action is a purchase, counted by PurchaseRateThrottle too, whose
    sign-in reads what the sale reads from the cache."""

    def _purchase(self) -> bool:
        # A viewset's action; None on a view that is not one.
        return getattr(self, "action", None) == "create"

    def get_throttles(self):
        throttles = super().get_throttles()
        if self._purchase():
            throttles.append(PurchaseRateThrottle())
        return throttles

    def cache_reads(self, request) -> list[str]:
        return sale_cache_reads() if self._purchase() else []


class TicketViewSet(PurchasesThrottled, StrictQueryParameters, viewsets.GenericViewSet):
    queryset = Ticket.objects.all()

    def get_serializer_class(self):
        # OPTIONS describes what the route's POST takes; its own action is None.
        post_action = self.action_map.get("post")
        if post_action == "check_in":
            return CheckInRequestSerializer
        return BuyMuseumTicketsRequestSerializer

    @extend_schema(
        operation_id="buyMuseumTickets",
        summary="Buy museum tickets",
        request=BuyMuseumTicketsRequestSerializer,
        parameters=[IDEMPOTENCY_KEY_PARAMETER, QUEUE_TOKEN_PARAMETER],
        responses={
            201: BuyMuseumTicketsResponseSerializer,
            **problems(400, 401, 403, 404, 409, 415, 422, 429),
        },
    )
    @idempotent
    def create(self, request):
        serializer = BuyMuseumTicketsRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        ticket = buy_ticket(
            buyer=request.user,
            admission=request.headers.get("Queue-Token"),
            **serializer.validated_data,
        )
        # The order the purchase made (orders' operations), which holds the ticket.
        location = reverse("orders-detail", kwargs={"orderId": ticket.order_id})
        return Response(
            BuyMuseumTicketsResponseSerializer(ticket).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    @extend_schema(
        operation_id="checkInTicket",
        summary="Check a ticket in at the door (staff)",
        description=(
            "Admits a ticket once, on its date (a timed ticket from its entry time less "
            "MUSEUM_ENTRY_ALLOWANCE_MINUTES), named by its QR token or its confirmation code; "
            "an order's confirmation code admits every valid ticket of the order at once "
            "(`admitted`) and names the others' refusals (`refused`). Codes are read in any "
            "case, with surrounding spaces or without their `ticket-general-`, "
            "`ticket-event-` or `order-` prefix. Refusals carry a `reason`: `forged` (a QR "
            "token whose signature fails), `unknown_ticket` (no ticket has that ticket code "
            "or token), `unknown_code` (no ticket or order has that code, or the text is no "
            "code), `cancelled`, `wrong_day`, `not_paid` (its order is held), `closed`, "
            "`too_early` (with `entryTime`) or `already_checked_in` (with `firstEntryAt`); an "
            "order none of whose tickets may come in answers 409 with its first ticket's "
            "reason, `orderCode` and `refused`. A member card (its `MM1.` token or card code) "
            "admits today's booked member visit as its order's code does, or on a day without "
            "entry slots as many walk-ins as the card still admits today (`member`, with "
            "`people` and `leftToday`; the ticket fields are null and `admitted` empty: walk-ins "
            "have no tickets); refused with `unknown_member_card` (404), `card_expired`, "
            "`card_cancelled`, `card_pending`, `card_not_valid_yet` (with `validUntil`), "
            "`no_member_visit` (409, on a day with entry slots) or `member_visits_used` (409, "
            "with `admits` and `left`). A group order's code admits `people` of the group (by "
            "default all still to come) though its invoice is unpaid, at most those of its "
            "headcount not yet admitted (`group`: `headcount`, `admitted`, `arrived`); refused "
            "with `more_than_booked` (409, `people` beyond its headcount), `group_not_approved`, "
            "`group_cancelled`, `group_another_day`, `group_no_show` or "
            "`group_arrived_in_full` (409)."
        ),
        request=CheckInRequestSerializer,
        responses={200: CheckInResponseSerializer, **problems(400, 401, 403, 404, 409, 415)},
    )
    @action(detail=False, methods=["post"], url_path="check-in", permission_classes=[MayCheckIn])
    def check_in(self, request):
        serializer = CheckInRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            admission = members.admit(
                scanned=serializer.validated_data["scanned"],
                by=request.user,
                people=serializer.validated_data.get("people"),
            )
        except TicketRefused as problem:
            if problem.admission is not None:
                # An order none of whose tickets may come in: the problem names the first
                # ticket's reason, and lists each ticket's.
                problem.extra["orderCode"] = problem.admission.order_code
                problem.extra["refused"] = RefusedTicketSerializer(
                    problem.admission.refused, many=True
                ).data
            raise
        return Response(CheckInResponseSerializer(admission).data)

    @extend_schema(
        operation_id="getTicketSigningKeys",
        summary="Public keys that verify ticket QR codes",
        description="Newest first. A door scanner verifies a ticket's QR token offline with these.",
        responses={200: SigningKeySerializer(many=True), **problems(401)},
    )
    @action(detail=False, methods=["get"], url_path="signing-key", pagination_class=None)
    def signing_key(self, request):
        return Response(tokens.public_keys())


class TicketImageView(StrictQueryParameters, APIView):
    renderer_classes = [MuseumJSONRenderer, PNGRenderer]

    def cache_reads(self, request) -> list[str]:
        # Read by the sign-in in its round trip (museum/authentication.py, `view_reads`).
        return selectors.image_cache_reads(self.kwargs["ticketId"])

    @extend_schema(
        operation_id="getTicketCode",
        summary="Get ticket QR code",
        description=(
            "The ticket as a PNG: the signed QR code with the museum's name, ticket type, date, "
            "event and confirmation code. Only its buyer and staff see it; anyone else gets 404. "
            "A ticket of an order awaiting payment has none yet, nor has one of an order never "
            "paid (its hold ran out): 409 `not_paid`."
        ),
        tags=["Tickets"],
        parameters=[
            OpenApiParameter("ticketId", OpenApiTypes.UUID, OpenApiParameter.PATH),
        ],
        responses={
            (200, "image/png"): OpenApiResponse(OpenApiTypes.BINARY, "The ticket image."),
            **problems(401, 404, 409),
        },
    )
    def get(self, request, ticketId):
        image = selectors.viewable_ticket_image(ticket_id=ticketId, viewer=request.user)
        response = HttpResponse(image.png, content_type="image/png")
        response["ETag"] = quote_etag(image.etag)
        patch_cache_control(response, private=True, max_age=TICKET_IMAGE_MAX_AGE)
        # Django's If-None-Match rules (weak comparison, lists, "*"): a 304 with the same headers.
        return get_conditional_response(request, etag=response["ETag"], response=response)
