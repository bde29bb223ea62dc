from django.http import HttpResponse
from django.urls import reverse
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import quote_etag
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from museum.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from museum.query import StrictQueryParameters, parameter_names, validated_query
from museum.renderers import MuseumJSONRenderer, PNGRenderer
from museum.schema import QUEUE_TOKEN_PARAMETER, problems
from museum.throttling import GiftCardRateThrottle
from orders import documents, membership_cards, receipts, selectors
from orders.models import Membership, Order
from orders.selectors import owned_membership, viewable_membership, viewable_memberships
from orders.serializers import (
    BuyMembershipRequestSerializer,
    CancelRequestSerializer,
    CategoryPriceSerializer,
    MembershipListQuerySerializer,
    MembershipSerializer,
    MembershipTypeSerializer,
    OrderListQuerySerializer,
    OrderSerializer,
    PaymentSerializer,
    PlaceOrderRequestSerializer,
    PriceQuerySerializer,
    QuoteSerializer,
    RedeemGiftRequestSerializer,
    SaleDocumentSerializer,
    SoldMembershipSerializer,
    StartPaymentRequestSerializer,
    VisitorCategorySerializer,
)
from orders.services import vouchers
from orders.services.cancellation import cancel_order
from orders.services.holds import confirm_order
from orders.services.memberships import (
    active_types,
    membership_for,
    redeem_gift,
    renew_membership,
    sell_membership,
)
from orders.services.payments import payments_of, start_payment
from orders.services.pricing import active_categories, price_list
from orders.services.sale import place_order, quote_order
from tickets.views import PurchasesThrottled

TICKET_ID = OpenApiParameter("ticketId", OpenApiTypes.UUID, OpenApiParameter.PATH)
DOCUMENT_NUMBER = OpenApiParameter(
    "number",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The document's number, e.g. R2026-000001.",
)


@extend_schema(tags=["Orders"])
class VisitorCategoryList(StrictQueryParameters, generics.ListAPIView):
    """A plain list, not a viewset's: it takes no paging (there are a handful)."""

    queryset = active_categories()
    serializer_class = VisitorCategorySerializer
    pagination_class = None

    @extend_schema(
        operation_id="listVisitorCategories",
        summary="Visitor categories and their prices",
        description="The categories on sale, with the general-entry price and share of an "
        "event's price each pays.",
        responses={200: VisitorCategorySerializer(many=True), **problems(401)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


@extend_schema(tags=["Orders"])
class PriceList(StrictQueryParameters, generics.GenericAPIView):
    """What each category pays on a day (general entry, or an event): a plain list."""

    serializer_class = CategoryPriceSerializer
    pagination_class = None

    def accepted_query_parameters(self) -> frozenset[str]:
        return parameter_names(PriceQuerySerializer)

    @extend_schema(
        operation_id="listPrices",
        summary="Prices per visitor category for a visit",
        description=(
            "What each visitor category on sale pays on `ticketDate` for general entry, or for "
            "the event `eventId`, priced as an order is (an event's share rounded half up to the "
            "cent). A whole order's total: `POST /orders` with `dryRun`."
        ),
        parameters=[PriceQuerySerializer],
        responses={200: CategoryPriceSerializer(many=True), **problems(400, 401, 404)},
    )
    def get(self, request):
        query = validated_query(PriceQuerySerializer, request)
        prices = price_list(ticket_date=query["ticketDate"], event_id=query.get("eventId"))
        rows = [
            {"category": category.category, "name": category.name, "price": price}
            for category, price in prices
        ]
        return Response(CategoryPriceSerializer(rows, many=True).data)


# What a quote reads of an order's request: not who buys it, nor whether to hold it.
QUOTED = (
    "ticket_type",
    "ticket_date",
    "lines",
    "event_id",
    "entry_time",
    "membership",
    "voucher",
    "donations",
)


class PDFRenderer(BaseRenderer):
    """Lets a client ask for application/pdf; problems on this view are still JSON."""

    media_type = "application/pdf"
    format = "pdf"
    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return MuseumJSONRenderer().render(data, accepted_media_type, renderer_context)


@extend_schema(tags=["Orders"])
class OrderViewSet(PurchasesThrottled, StrictQueryParameters, viewsets.GenericViewSet):
    queryset = Order.objects.all()
    lookup_url_kwarg = "orderId"
    lookup_value_converter = "uuid"
    serializer_class = PlaceOrderRequestSerializer
    list_query_serializer = OrderListQuerySerializer

    def get_throttles(self):
        throttles = super().get_throttles()
        # A gift card's code tried as a payment counts as a balance asked.
        if self.action == "payments" and self.request.method == "POST":
            if isinstance(self.request.data, dict) and self.request.data.get("code"):
                throttles.append(GiftCardRateThrottle())
        return throttles

    @extend_schema(
        operation_id="placeOrder",
        summary="Buy several tickets at once, or hold them",
        description=(
            "All or nothing: every ticket of the order gets its place, or none does (409 "
            "`sold_out` with `available`). Prices come from the visitor categories. With "
            "`hold`, the places are kept for MUSEUM_HOLD_MINUTES until the order is confirmed. "
            "With `membership`, a member visit: `member` lines are free places that take the "
            "slot's places kept for members first and need no payment (409 "
            "`membership_not_valid`, `member_visit_exists`). With a `voucher` (the order's, or "
            "a line's), each ticket it reduces is one of its uses, taken with the places (409 "
            "`voucher_not_applicable`, `voucher_used_up`, `voucher_budget_spent`, "
            "`voucher_is_gift_card`). `donations` give to the museum's funds beside the tickets "
            "(`GET /funds`), in the order's total, untaxed."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER, QUEUE_TOKEN_PARAMETER],
        request=PlaceOrderRequestSerializer,
        responses={201: OrderSerializer, **problems(400, 401, 403, 404, 409, 415, 422, 429)},
    )
    @idempotent
    def create(self, request):
        serializer = PlaceOrderRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if "membership" in data:
            data["membership"] = membership_for(data["membership"])
        with vouchers.reasons_for(request.user):
            if data.pop("dry_run"):
                quoted = {name: data[name] for name in QUOTED if name in data}
                quote = quote_order(**quoted, buyer=request.user)
                return Response(QuoteSerializer(quote).data)
            admission = request.headers.get("Queue-Token")
            order = place_order(buyer=request.user, admission=admission, **data)
        location = reverse("orders-detail", kwargs={"orderId": order.pk})
        return Response(
            OrderSerializer(order).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    @extend_schema(
        operation_id="listOrders",
        summary="Orders, newest first",
        description=(
            "The account's own orders (staff who may view any order: all), paged like the "
            "events, for visits from `startDate` to `endDate`, of a `status`, or with a "
            "`confirmationCode` (the order's or any of its tickets')."
        ),
        parameters=[OrderListQuerySerializer],
        responses={200: OrderSerializer(many=True), **problems(400, 401)},
    )
    def list(self, request):
        query = validated_query(OrderListQuerySerializer, request)
        orders = selectors.viewable_orders(
            viewer=request.user,
            start=query.get("startDate"),
            end=query.get("endDate"),
            status=query.get("status"),
            code=query.get("confirmationCode"),
        )
        page = selectors.with_membership_sales(self.paginate_queryset(orders) or [])
        return self.get_paginated_response(OrderSerializer(page, many=True).data)

    @extend_schema(
        operation_id="getOrder",
        summary="An order and its tickets",
        description="For its buyer and staff; anyone else gets 404.",
        responses={200: OrderSerializer, **problems(401, 404)},
    )
    def retrieve(self, request, orderId):
        order = selectors.viewable_order(order_id=orderId, viewer=request.user)
        return Response(OrderSerializer(order).data)

    @extend_schema(
        operation_id="confirmOrder",
        summary="Confirm a held order",
        description=(
            "A sales partner's order (paid on account) or a free one; its confirmation email "
            "goes then. An online order with a price is confirmed by its payment: 402 "
            "`payment_required`. After the hold ran out, 409 `hold_expired`."
        ),
        request=None,
        responses={200: OrderSerializer, **problems(401, 402, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def confirm(self, request, orderId):
        order = confirm_order(order_id=orderId, by=request.user)
        return Response(OrderSerializer(order).data)

    @extend_schema(
        methods=["POST"],
        operation_id="startOrderPayment",
        summary="Pay a held order",
        description=(
            "Starts a payment with a provider; the first start extends the hold, once, to "
            "MUSEUM_PAYMENT_HOLD_MINUTES after it so that it can complete. One payment is in "
            "progress at a time: a start with its provider answers it again, a start with "
            "another cancels it at its provider first. `stripe` answers a `clientSecret` for "
            "Stripe.js; Stripe's webhook then confirms the order and its email goes. `desk` "
            "(staff who take payments) is paid at once. A provider this account may not use is "
            "400; an order not held, free or a sales partner's, 409 `nothing_to_pay`; after the "
            "hold ran out, 409 `hold_expired`; the provider failing, 502 `provider_failed`."
        ),
        request=StartPaymentRequestSerializer,
        responses={201: PaymentSerializer, **problems(400, 401, 403, 404, 409, 429, 502)},
    )
    @extend_schema(
        methods=["GET"],
        operation_id="listOrderPayments",
        summary="The order's payments",
        description="Every attempt to pay it, oldest first; those confirmed cover its total.",
        responses={200: PaymentSerializer(many=True), **problems(401, 404)},
    )
    @action(detail=True, methods=["get", "post"], pagination_class=None)
    def payments(self, request, orderId):
        if request.method == "GET":
            payments = payments_of(order_id=orderId, viewer=request.user)
            return Response(PaymentSerializer(payments, many=True).data)
        serializer = StartPaymentRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        payment = start_payment(
            order_id=orderId,
            by=request.user,
            provider_name=data["provider"],
            method=data.get("method", ""),
            code=data.get("code", ""),
        )
        return Response(PaymentSerializer(payment).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="cancelOrder",
        summary="Cancel an order",
        description=(
            "Its buyer, until MUSEUM_CANCEL_HOURS_BEFORE hours before the visit (later: 409 "
            "`too_late`), or staff. The places are freed, the tickets void, the prices paid "
            "recorded as refund due. A ticket already checked in is 409 `checked_in`, unless "
            "staff send `evenIfCheckedIn`."
        ),
        request=CancelRequestSerializer,
        responses={200: OrderSerializer, **problems(400, 401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, orderId):
        return self._cancel(request, order_id=orderId)

    @extend_schema(
        operation_id="cancelOrderTicket",
        summary="Cancel one ticket of an order",
        description="As cancelling the order, for one of its tickets.",
        parameters=[TICKET_ID],
        request=CancelRequestSerializer,
        responses={200: OrderSerializer, **problems(400, 401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"], url_path="tickets/<uuid:ticketId>/cancel")
    def cancel_ticket(self, request, orderId, ticketId):
        return self._cancel(request, order_id=orderId, ticket_id=ticketId)

    def _cancel(self, request, **which) -> Response:
        serializer = CancelRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        order = cancel_order(by=request.user, **which, **serializer.validated_data)
        return Response(OrderSerializer(order).data)

    @extend_schema(
        operation_id="getOrderTicketsPdf",
        summary="The order's tickets as a PDF",
        description=(
            "One ticket a page, to print at home (A4, or US Letter by MUSEUM_PAPER_SIZE), a "
            "cancelled one stamped CANCELLED. For its buyer and staff; a held order's "
            "tickets come once it is paid, and an order never paid (its hold ran out) has none "
            "(409 `not_paid`). Made once and kept: its `ETag` "
            "changes when a ticket does, and `If-None-Match` with the current one answers 304."
        ),
        responses={
            (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, "The tickets."),
            **problems(401, 404, 409),
        },
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="tickets.pdf",
        renderer_classes=[MuseumJSONRenderer, PDFRenderer],
    )
    def tickets_pdf(self, request, orderId):
        order = selectors.printable_order(order_id=orderId, viewer=request.user)
        kept = documents.order_pdf(order=order)
        response = HttpResponse(bytes(kept.pdf), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="{order.confirmation_code}.pdf"'
        response["ETag"] = quote_etag(kept.etag)
        # Asked again each time (a 304 while unchanged): a cancellation shows at once.
        patch_cache_control(response, private=True, no_cache=True)
        # Django's If-None-Match rules (weak comparison, lists, "*"): a 304 with the same headers.
        return get_conditional_response(request, etag=response["ETag"], response=response)

    @extend_schema(
        operation_id="listOrderDocuments",
        summary="The order's receipts, invoices and credit notes",
        description=(
            "Each document issued for the order, oldest first: a receipt (an invoice for a "
            "business or a sales partner's order) when it was confirmed with a price, and a "
            "credit note, its amounts negative, for each cancellation paid back after that. "
            "Numbered from gapless series a year and never changed once issued. For its buyer "
            "and staff; anyone else gets 404."
        ),
        responses={200: SaleDocumentSerializer(many=True), **problems(401, 404)},
    )
    @action(detail=True, methods=["get"], pagination_class=None)
    def documents(self, request, orderId):
        documents = selectors.viewable_documents(order_id=orderId, viewer=request.user)
        return Response(SaleDocumentSerializer(documents, many=True).data)

    @extend_schema(
        operation_id="getOrderDocumentPdf",
        summary="A receipt, invoice or credit note of the order as a PDF",
        description=(
            "The document `number` in the order's language, as it was issued. For the order's "
            "buyer and staff; anyone else, or a number the order does not have, gets 404. Made "
            "once and kept: its `ETag` never changes, and `If-None-Match` with it answers 304."
        ),
        parameters=[DOCUMENT_NUMBER],
        responses={
            (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, "The document."),
            **problems(401, 404),
        },
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="documents/<str:number>",
        url_name="document",
        renderer_classes=[MuseumJSONRenderer, PDFRenderer],
    )
    def document(self, request, orderId, number):
        document = selectors.viewable_document(order_id=orderId, number=number, viewer=request.user)
        kept = receipts.document_pdf(document)
        response = HttpResponse(bytes(kept.pdf), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="{receipts.filename(kept)}"'
        response["ETag"] = quote_etag(kept.etag)
        patch_cache_control(response, private=True, no_cache=True)
        return get_conditional_response(request, etag=response["ETag"], response=response)


@extend_schema(tags=["Memberships"])
class MembershipTypeList(StrictQueryParameters, generics.ListAPIView):
    """A plain list, not a viewset's: a museum sells a handful of types."""

    serializer_class = MembershipTypeSerializer
    pagination_class = None

    def get_queryset(self):
        return active_types()

    @extend_schema(
        operation_id="listMembershipTypes",
        summary="Membership types on sale",
        description="The membership types on sale, in the shop's order, named and described in "
        "the request's language (Accept-Language).",
        responses={200: MembershipTypeSerializer(many=True), **problems(401)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


MEMBERSHIP_ID = OpenApiParameter("membershipId", OpenApiTypes.UUID, OpenApiParameter.PATH)


@extend_schema(tags=["Memberships"])
class MembershipViewSet(PurchasesThrottled, StrictQueryParameters, viewsets.GenericViewSet):
    queryset = Membership.objects.all()
    lookup_url_kwarg = "membershipId"
    lookup_value_converter = "uuid"
    serializer_class = BuyMembershipRequestSerializer
    list_query_serializer = MembershipListQuerySerializer

    @extend_schema(
        operation_id="buyMembership",
        summary="Buy a membership, or give one",
        description=(
            "A membership of `membershipType`, sold by an order of its own that pays like any "
            "other: an online account's is held until paid (`POST /orders/{orderId}/payments`), "
            "a sales partner's is paid on account, a free one is confirmed at once. It is "
            "`pending` until its order is confirmed, then `active` from `startDate`. A `gift` "
            "has no holder: its `giftCode` (shown to its buyer) is redeemed by whoever it is "
            "given to, and it is valid from that day. An online account buys at most "
            "MUSEUM_MAX_MEMBERSHIPS_PER_DAY in 24 hours (429 `too_many_memberships`)."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=BuyMembershipRequestSerializer,
        responses={201: SoldMembershipSerializer, **problems(400, 401, 409, 415, 422, 429)},
    )
    @idempotent
    def create(self, request):
        serializer = BuyMembershipRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        membership = sell_membership(
            buyer=request.user,
            type_code=data["membershipType"],
            holder_name=data["holderName"],
            email=data["email"],
            start_date=data.get("startDate"),
            gift=data["gift"],
            language=data.get("language", ""),
        )
        return self._sold(request, membership, order=membership.order)

    def _sold(self, request, membership: Membership, *, order: Order) -> Response:
        membership = viewable_membership(membership_id=membership.pk, viewer=request.user)
        membership.order = order
        location = reverse("memberships-detail", kwargs={"membershipId": membership.pk})
        return Response(
            SoldMembershipSerializer(membership, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    @extend_schema(
        operation_id="listMemberships",
        summary="Memberships, newest first",
        description=(
            "The account's own memberships and the gifts it gave (staff who may view any "
            "membership: all), paged, of a `status` (a lapsed one is `expired`), a "
            "`membershipType`, valid until `expiringBefore` or earlier, or whose holder's name, "
            "email or card code contains `search` (a gift's giver finds no gift another account "
            "redeemed by its holder's data)."
        ),
        parameters=[MembershipListQuerySerializer],
        responses={200: MembershipSerializer(many=True), **problems(400, 401)},
    )
    def list(self, request):
        query = validated_query(MembershipListQuerySerializer, request)
        memberships = viewable_memberships(
            viewer=request.user,
            status=query.get("status"),
            type_code=query.get("membershipType"),
            expiring_before=query.get("expiringBefore"),
            search=query.get("search"),
        )
        page = self.paginate_queryset(memberships)
        data = MembershipSerializer(page, many=True, context={"request": request}).data
        return self.get_paginated_response(data)

    @extend_schema(
        operation_id="getMembership",
        summary="A membership",
        description=(
            "For its owner and staff, and a gift's giver: once another account redeemed the "
            "gift, its giver reads that it was, with the holder's `holderName`, `email`, "
            "`cardCode` and `cardUrl` null. Anyone else gets 404."
        ),
        responses={200: MembershipSerializer, **problems(401, 404)},
    )
    def retrieve(self, request, membershipId):
        membership = viewable_membership(membership_id=membershipId, viewer=request.user)
        return Response(MembershipSerializer(membership, context={"request": request}).data)

    @extend_schema(
        operation_id="redeemGiftMembership",
        summary="Redeem a gift membership",
        description=(
            "The gift with `giftCode` becomes `holderName`'s membership, valid from today, and "
            "this account's. Once: a code redeemed already is 409 `gift_already_redeemed`; a "
            "gift not paid yet, 409 `gift_not_paid`; an unknown code, 404."
        ),
        request=RedeemGiftRequestSerializer,
        responses={200: MembershipSerializer, **problems(400, 401, 404, 409, 415)},
    )
    @action(detail=False, methods=["post"])
    def redeem(self, request):
        serializer = RedeemGiftRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        membership = redeem_gift(
            gift_code=data["giftCode"],
            holder_name=data["holderName"],
            email=data["email"],
            by=request.user,
        )
        membership = viewable_membership(membership_id=membership.pk, viewer=request.user)
        return Response(MembershipSerializer(membership, context={"request": request}).data)

    @extend_schema(
        operation_id="renewMembership",
        summary="Renew a membership",
        description=(
            "Sells the next period as an order, paid like any other: from the day after "
            "`validUntil` when renewed before it or within MUSEUM_MEMBERSHIP_GRACE_DAYS (30) "
            "after, else from the day the order is confirmed. Its owner's, or staff's. A "
            "pending or cancelled membership is 409 `membership_not_renewable`."
        ),
        parameters=[MEMBERSHIP_ID, IDEMPOTENCY_KEY_PARAMETER],
        request=None,
        responses={201: OrderSerializer, **problems(400, 401, 404, 409, 422, 429)},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def renew(self, request, membershipId):
        membership = owned_membership(membership_id=membershipId, viewer=request.user)
        order = renew_membership(membership=membership, buyer=request.user)
        location = reverse("orders-detail", kwargs={"orderId": order.pk})
        answer = OrderSerializer(order).data
        return Response(answer, status=status.HTTP_201_CREATED, headers={"Location": location})


# The member's card (issue 37): its PNG and its card-sized PDF.

CARD_DESCRIPTION = (
    "The membership's card in its language: the signed QR code the door reads, with the "
    "holder's name, the type, the last valid day, the card's code and the museum's name. For "
    "the membership's buyer and staff; anyone else gets 404. A membership not paid yet (or a "
    "gift not redeemed yet) or cancelled has none: 409 `no_membership_card`. Drawn once and "
    "kept: its `ETag` changes when what it prints does (a renewal, another holder), and "
    "`If-None-Match` with the current one answers 304."
)


class MembershipCardView(StrictQueryParameters, APIView):
    """One face of the card, `png` or `pdf`; each route's view names which."""

    kind: str
    media_type: str

    def get(self, request, membershipId):
        membership = selectors.printable_membership(membership_id=membershipId, viewer=request.user)
        kept = membership_cards.membership_card(membership=membership)
        response = HttpResponse(bytes(getattr(kept, self.kind)), content_type=self.media_type)
        filename = membership_cards.filename(membership, self.kind)
        response["Content-Disposition"] = f'inline; filename="{filename}"'
        response["ETag"] = quote_etag(kept.etag)
        # Asked again each time (a 304 while unchanged): a renewal or a cancellation shows at once.
        patch_cache_control(response, private=True, no_cache=True)
        # Django's If-None-Match rules (weak comparison, lists, "*"): a 304 with the same headers.
        return get_conditional_response(request, etag=response["ETag"], response=response)


@extend_schema(tags=["Memberships"])
class MembershipCardPng(MembershipCardView):
    renderer_classes = [MuseumJSONRenderer, PNGRenderer]
    kind, media_type = "png", "image/png"

    @extend_schema(
        operation_id="getMembershipCardPng",
        summary="The member's card as a PNG",
        description=CARD_DESCRIPTION,
        parameters=[MEMBERSHIP_ID],
        responses={
            (200, "image/png"): OpenApiResponse(OpenApiTypes.BINARY, "The card."),
            **problems(401, 404, 409),
        },
    )
    def get(self, request, membershipId):
        return super().get(request, membershipId)


@extend_schema(tags=["Memberships"])
class MembershipCardPdf(MembershipCardView):
    renderer_classes = [MuseumJSONRenderer, PDFRenderer]
    kind, media_type = "pdf", "application/pdf"

    @extend_schema(
        operation_id="getMembershipCardPdf",
        summary="The member's card as a card-sized PDF",
        description=CARD_DESCRIPTION + " The page is a bank card's (ID-1: 85.6 × 54 mm).",
        parameters=[MEMBERSHIP_ID],
        responses={
            (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, "The card."),
            **problems(401, 404, 409),
        },
    )
    def get(self, request, membershipId):
        return super().get(request, membershipId)


@extend_schema(tags=["Memberships"])
class MembershipGiftCardPdf(StrictQueryParameters, APIView):
    """A gift's card, drawn on each request: printed rarely, and never kept past redemption."""

    renderer_classes = [MuseumJSONRenderer, PDFRenderer]

    @extend_schema(
        operation_id="getMembershipGiftCardPdf",
        summary="A gift membership's gift card as an A6 PDF",
        description=(
            "The gift card the giver prints or hands over, in the gift's language: the museum's "
            "name, the type and what it gives, the gift code in words and as a QR code, and how "
            "to redeem it (visitors at the front desk or on the museum's website; integrators "
            "with `POST /v1.1/memberships/redeem`). For the gift's buyer and staff; anyone else "
            "gets 404. A membership that is not "
            "a gift, a gift not paid yet or cancelled, and a redeemed gift, whose code is spent, "
            "have none: 409 `no_gift_card`. The page is A6 (105 × 148 mm)."
        ),
        parameters=[MEMBERSHIP_ID],
        responses={
            (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, "The gift card."),
            **problems(401, 404, 409),
        },
    )
    def get(self, request, membershipId):
        membership = selectors.gift_card_membership(membership_id=membershipId, viewer=request.user)
        pdf = membership_cards.gift_card_pdf(membership)
        response = HttpResponse(pdf, content_type="application/pdf")
        filename = membership_cards.gift_filename(membership)
        response["Content-Disposition"] = f'inline; filename="{filename}"'
        # Its code redeems the gift: kept by no cache on the way.
        patch_cache_control(response, private=True, no_store=True)
        return response
