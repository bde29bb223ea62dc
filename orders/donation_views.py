"""The API's face of donations (orders.services.donations): the funds offered, a donation-only
order, and staff's refund of one donation. Orders with donations beside tickets are placed
through `POST /orders` (orders.views)."""

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from museum.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from museum.query import StrictQueryParameters
from museum.schema import problems
from orders.serializers import DonateRequestSerializer, FundSerializer, OrderSerializer
from orders.services import donations as giving
from tickets.views import PurchasesThrottled

ORDER_ID = OpenApiParameter("orderId", OpenApiTypes.UUID, OpenApiParameter.PATH)
DONATION_ID = OpenApiParameter("donationId", OpenApiTypes.INT, OpenApiParameter.PATH)


@extend_schema(tags=["Donations"])
class FundList(StrictQueryParameters, generics.ListAPIView):
    """A plain list: a museum asks for a handful of funds."""

    serializer_class = FundSerializer
    pagination_class = None

    def get_queryset(self):
        return giving.active_funds()

    @extend_schema(
        operation_id="listFunds",
        summary="The funds a donation may go to",
        description=(
            "The active funds, in the museum's order, named and described in the request's "
            "language (Accept-Language), each with the least and most one donation gives and "
            "the amounts suggested."
        ),
        responses={200: FundSerializer(many=True), **problems(401)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


@extend_schema(tags=["Donations"])
class DonationCreate(PurchasesThrottled, APIView):
    @extend_schema(
        operation_id="donate",
        summary="Give to the museum's funds",
        description=(
            "A donation-only order: no tickets, no places, its `total` the donations, untaxed. "
            "It pays like any other order (`POST /orders/{orderId}/payments`; held until paid "
            "online), and its receipt lists the donations apart, with the museum's charity "
            "statement. Its buyer cannot cancel it once paid (409 `donation_given`); staff "
            "refund a donation (`POST /orders/{orderId}/donations/{donationId}/refund`)."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=DonateRequestSerializer,
        responses={201: OrderSerializer, **problems(400, 401, 409, 415, 422, 429)},
    )
    @idempotent
    def post(self, request):
        serializer = DonateRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        order = giving.give(
            buyer=request.user,
            email=data["email"],
            donations=data["donations"],
            language=data.get("language", ""),
            name=data.get("name", ""),
        )
        location = reverse("orders-detail", kwargs={"orderId": order.pk})
        return Response(
            OrderSerializer(order).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )


@extend_schema(tags=["Donations"])
class DonationRefund(APIView):
    @extend_schema(
        operation_id="refundDonation",
        summary="Give a donation back (staff)",
        description=(
            "Staff who may cancel any order refund one donation of a paid order, whole, through "
            "the payments that took it, with a credit note; its order and tickets stay. Its "
            "buyer gets 403; anyone else 404. Refunded already: 409 `donation_refunded`; an "
            "order never paid: 409 `nothing_to_pay`."
        ),
        parameters=[ORDER_ID, DONATION_ID],
        request=None,
        responses={200: OrderSerializer, **problems(401, 403, 404, 409)},
    )
    def post(self, request, orderId, donationId):
        order = giving.refund_donation(order_id=orderId, donation_id=donationId, by=request.user)
        order.sold_tickets = list(order.tickets.select_related("category", "slot", "voucher"))
        return Response(OrderSerializer(order).data)
