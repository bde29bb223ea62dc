from django.http import HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_cache_control
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from giftcards import cards, selectors, services
from giftcards.models import GiftCard
from giftcards.serializers import (
    BalanceSerializer,
    BuyGiftCardRequestSerializer,
    GiftCardCodeSerializer,
    GiftCardSerializer,
    SoldGiftCardSerializer,
)
from museum.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from museum.query import StrictQueryParameters
from museum.renderers import MuseumJSONRenderer
from museum.schema import problems
from museum.throttling import GiftCardRateThrottle
from orders.views import PDFRenderer
from tickets.views import PurchasesThrottled

GIFT_CARD_ID = OpenApiParameter("giftCardId", OpenApiTypes.UUID, OpenApiParameter.PATH)


@extend_schema(tags=["Gift cards"])
class GiftCardViewSet(PurchasesThrottled, viewsets.GenericViewSet):
    queryset = GiftCard.objects.all()
    lookup_url_kwarg = "giftCardId"
    lookup_value_converter = "uuid"
    serializer_class = BuyGiftCardRequestSerializer

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.action == "balance":
            throttles.append(GiftCardRateThrottle())
        return throttles

    @extend_schema(
        operation_id="buyGiftCard",
        summary="Buy a gift card",
        description=(
            "A gift card of `amount`, sold by an order of its own that pays like any other "
            "(`POST /orders/{orderId}/payments`; not with a gift card), untaxed. It holds its "
            "value, and its `code` is shown, once that order is confirmed; it may be spent until "
            "the end of the year MUSEUM_GIFT_CARD_YEARS (3) after."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=BuyGiftCardRequestSerializer,
        responses={201: SoldGiftCardSerializer, **problems(400, 401, 409, 415, 422, 429)},
    )
    @idempotent
    def create(self, request):
        serializer = BuyGiftCardRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        card = services.sell_gift_card(
            buyer=request.user,
            amount=data["amount"],
            email=data["email"],
            language=data.get("language", ""),
        )
        location = reverse("giftcards-detail", kwargs={"giftCardId": card.pk})
        return Response(
            SoldGiftCardSerializer(card).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    @extend_schema(
        operation_id="getGiftCard",
        summary="A gift card, its balance and its ledger",
        description="For its buyer and staff; anyone else gets 404.",
        responses={200: GiftCardSerializer, **problems(401, 404)},
    )
    def retrieve(self, request, giftCardId):
        card = selectors.viewable_card(card_id=giftCardId, viewer=request.user)
        return Response(GiftCardSerializer(card).data)

    @extend_schema(
        operation_id="giftCardBalance",
        summary="What a gift card's code holds",
        description=(
            "Any account, MUSEUM_THROTTLE_GIFT_CARD_RATE (10) codes a minute; an unknown code "
            "and one not paid yet are the same 404 `unknown_gift_card`."
        ),
        request=GiftCardCodeSerializer,
        responses={200: BalanceSerializer, **problems(400, 401, 404, 429)},
    )
    @action(detail=False, methods=["post"])
    def balance(self, request):
        serializer = GiftCardCodeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        card = services.card_of_code(serializer.validated_data["code"])
        answer = {
            "balance": card.balance(),
            "expires_on": card.expires_on,
            "status": card.status_on(timezone.localdate()),
        }
        return Response(BalanceSerializer(answer).data)


@extend_schema(tags=["Gift cards"])
class GiftCardPdfView(StrictQueryParameters, APIView):
    """The card to print or give, kept once drawn (giftcards.cards)."""

    renderer_classes = [MuseumJSONRenderer, PDFRenderer]

    @extend_schema(
        operation_id="getGiftCardPdf",
        summary="A gift card as an A6 PDF",
        description=(
            "The card its buyer prints or gives, in the card's language: the museum's name, its "
            "value, its code in words and as a QR code, and the last day it may be spent. For "
            "its buyer and staff; anyone else gets 404. A card whose order is not paid yet has "
            "none: 409 `gift_card_not_issued`. The page is A6 (105 × 148 mm)."
        ),
        parameters=[GIFT_CARD_ID],
        responses={
            (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, "The gift card."),
            **problems(401, 404, 409),
        },
    )
    def get(self, request, giftCardId):
        card = selectors.printable_card(card_id=giftCardId, viewer=request.user)
        response = HttpResponse(cards.card_pdf(card), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="{cards.filename(card)}"'
        # Its code spends the card: kept by no cache on the way.
        patch_cache_control(response, private=True, no_store=True)
        return response
