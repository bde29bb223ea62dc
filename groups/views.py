"""The group requests' API (docs/groups.md): each operation one service of groups.services, the
reads through groups.selectors. Any account asks; staff who answer group requests
(`groups.answer_group_requests`) approve, offer another time or decline; the owner or staff
change the numbers; staff who take payments at the desk record the group's. And the tour
programmes a group may book."""

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from groups import selectors
from groups.models import GroupRequest, TourProgramme
from groups.serializers import (
    ApproveGroupRequestSerializer,
    CancelGroupVisitRequestSerializer,
    DeclineGroupRequestSerializer,
    GroupNumbersRequestSerializer,
    GroupPaymentRequestSerializer,
    GroupRequestListQuerySerializer,
    GroupRequestSerializer,
    OfferGroupTimeRequestSerializer,
    RequestGroupRequestSerializer,
    TourProgrammeSerializer,
)
from groups.services import approval, money, pricing
from groups.services import numbers as group_numbers
from groups.services import requests as group_requests
from museum import i18n
from museum.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from museum.query import StrictQueryParameters, validated_query
from museum.schema import problems
from museum.throttling import GroupRequestRateThrottle
from orders.serializers import PaymentSerializer

REQUEST_ID = OpenApiParameter("requestId", OpenApiTypes.INT, OpenApiParameter.PATH)
TAKE_DESK_PAYMENT = "orders.take_desk_payment"
STAFF = "Staff who answer group requests (`groups.answer_group_requests`)"


@extend_schema(tags=["Groups"])
class GroupRequestViewSet(StrictQueryParameters, viewsets.GenericViewSet):
    queryset = GroupRequest.objects.none()  # what the schema reads
    serializer_class = GroupRequestSerializer
    lookup_url_kwarg = "requestId"
    lookup_value_converter = "int"
    list_query_serializer = GroupRequestListQuerySerializer

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.action == "create":
            throttles.append(GroupRequestRateThrottle())
        return throttles

    @extend_schema(
        operation_id="requestGroupVisit",
        summary="Ask for a group's visit",
        description=(
            "Any account, MUSEUM_THROTTLE_GROUP_REQUEST_RATE (10) an hour: the group's "
            "organisation, contact, day (and entry time on a timed day) with alternatives, "
            "people per category, and a guided tour if wanted. It holds its places at once, "
            "until `expiresAt` (MUSEUM_GROUP_REQUEST_HOLD_DAYS), while staff answer; no room "
            "is 409 `sold_out`. The group is mailed that it was received."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=RequestGroupRequestSerializer,
        responses={201: GroupRequestSerializer, **problems(400, 401, 409, 415, 422)},
    )
    @idempotent
    def create(self, request):
        data = _validated(RequestGroupRequestSerializer, request)
        data.setdefault("language", i18n.current())
        group = group_requests.request_group(account=request.user, **data)
        location = reverse("group-requests-detail", kwargs={"requestId": group.pk})
        return Response(
            _answer(group.pk, request.user), status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )  # fmt: skip

    @extend_schema(
        operation_id="listGroupRequests",
        summary="Group requests, newest first",
        description=f"The account's own; {STAFF}: all, of a `status` if given.",
        parameters=[GroupRequestListQuerySerializer],
        responses={200: GroupRequestSerializer(many=True), **problems(400, 401)},
    )
    def list(self, request):
        query = validated_query(GroupRequestListQuerySerializer, request)
        found = selectors.viewable_groups(viewer=request.user, status=query.get("status"))
        page = self.paginate_queryset(found)
        return self.get_paginated_response(GroupRequestSerializer(page, many=True).data)

    @extend_schema(
        operation_id="getGroupRequest",
        summary="A group request, and once approved its visit and invoice's terms",
        description=f"The account's own; {STAFF}: any. Another's is 404.",
        parameters=[REQUEST_ID],
        responses={200: GroupRequestSerializer, **problems(401, 404)},
    )
    def retrieve(self, request, requestId):
        return Response(_answer(requestId, request.user))

    @extend_schema(
        operation_id="approveGroupRequest",
        summary="Approve a group request: its group order, confirmed, invoice due",
        description=(
            f"{STAFF}. The request becomes a confirmed group order, its tickets issued at once, "
            "its invoice due (a deposit, then the balance); with `date` (and `entryTime`) at "
            "that time, its places moved there first; with `tourId`, another tour programme; "
            "with `guideIds`, those guides are asked to lead its tour. A request no longer "
            "waiting is 409."
        ),
        parameters=[REQUEST_ID],
        request=ApproveGroupRequestSerializer,
        responses={200: GroupRequestSerializer, **problems(400, 401, 403, 404, 409, 415)},
    )
    @action(detail=True, methods=["post"])
    def approve(self, request, requestId):
        _must_answer(request)
        data = _validated(ApproveGroupRequestSerializer, request)
        approval.approve(request_id=requestId, by=request.user, **data)
        return Response(_answer(requestId, request.user))

    @extend_schema(
        operation_id="offerGroupTime",
        summary="Offer a group another time",
        description=(
            f"{STAFF}. Its places move to the time offered; the group is mailed a link to "
            "accept it, and the request waits again until `expiresAt`."
        ),
        parameters=[REQUEST_ID],
        request=OfferGroupTimeRequestSerializer,
        responses={200: GroupRequestSerializer, **problems(400, 401, 403, 404, 409, 415)},
    )
    @action(detail=True, methods=["post"])
    def offer(self, request, requestId):
        _must_answer(request)
        data = _validated(OfferGroupTimeRequestSerializer, request)
        group_requests.offer_time(request_id=requestId, by=request.user, **data)
        return Response(_answer(requestId, request.user))

    @extend_schema(
        operation_id="declineGroupRequest",
        summary="Decline a group request, with a reason",
        description=f"{STAFF}. Its places go back; the group is mailed the reason.",
        parameters=[REQUEST_ID],
        request=DeclineGroupRequestSerializer,
        responses={200: GroupRequestSerializer, **problems(400, 401, 403, 404, 409, 415)},
    )
    @action(detail=True, methods=["post"])
    def decline(self, request, requestId):
        _must_answer(request)
        data = _validated(DeclineGroupRequestSerializer, request)
        group_requests.decline(request_id=requestId, by=request.user, reason=data["reason"])
        return Response(_answer(requestId, request.user))

    @extend_schema(
        operation_id="acceptGroupOffer",
        summary="Accept the time offered",
        description=(
            "The request's own account: the time staff offered becomes the request's, which "
            "waits for their answer again. A request with no offer waiting is 409."
        ),
        parameters=[REQUEST_ID],
        request=None,
        responses={200: GroupRequestSerializer, **problems(401, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def accept(self, request, requestId):
        selectors.own_group(request_id=requestId, viewer=request.user)
        group_requests.accept_offer(request_id=requestId)
        return Response(_answer(requestId, request.user))

    @extend_schema(
        operation_id="changeGroupNumbers",
        summary="Change a group's numbers",
        description=(
            f"The request's own account, or {STAFF}: `lines` are the group's people now. Up "
            "within the places left; down, the invoice is recomputed with a credit note until "
            "`finalNumbersDate`, and after it fewer people are still billed."
        ),
        parameters=[REQUEST_ID],
        request=GroupNumbersRequestSerializer,
        responses={200: GroupRequestSerializer, **problems(400, 401, 404, 409, 415)},
    )
    @action(detail=True, methods=["post"])
    def numbers(self, request, requestId):
        selectors.viewable_group(request_id=requestId, viewer=request.user)
        data = _validated(GroupNumbersRequestSerializer, request)
        group_numbers.change_numbers(request_id=requestId, by=request.user, lines=data["lines"])
        return Response(_answer(requestId, request.user))

    @extend_schema(
        operation_id="cancelGroupVisit",
        summary="Call a group's visit off",
        description=(
            f"The request's own account, or {STAFF}, with an optional `reason`. A waiting "
            "request gives its places back. An approved one's order is cancelled and its "
            "places go back: before `finalNumbersDate` nothing is owed (a credit note cancels "
            "the invoice; what was paid is refunded first: 409 `group_paid_beyond`), after it "
            "what it cost is still billed. Once anyone came through the door: 409 `checked_in`."
        ),
        parameters=[REQUEST_ID],
        request=CancelGroupVisitRequestSerializer,
        responses={200: GroupRequestSerializer, **problems(400, 401, 404, 409, 415)},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, requestId):
        selectors.viewable_group(request_id=requestId, viewer=request.user)
        data = _validated(CancelGroupVisitRequestSerializer, request)
        group_numbers.cancel_group(request_id=requestId, by=request.user, **data)
        return Response(_answer(requestId, request.user))

    @extend_schema(
        operation_id="recordGroupPayment",
        summary="Record a group's payment",
        description=(
            "Staff who take payments at the desk (`orders.take_desk_payment`): what the group "
            "paid by bank transfer (or `method`), toward its invoice."
        ),
        parameters=[REQUEST_ID, IDEMPOTENCY_KEY_PARAMETER],
        request=GroupPaymentRequestSerializer,
        responses={201: PaymentSerializer, **problems(400, 401, 403, 404, 409, 415, 422)},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def payments(self, request, requestId):
        if not request.user.has_perm(TAKE_DESK_PAYMENT):
            raise PermissionDenied()
        selectors.group_of(request_id=requestId)
        data = _validated(GroupPaymentRequestSerializer, request)
        payment = money.record_payment(request_id=requestId, by=request.user, **data)
        return Response(PaymentSerializer(payment).data, status=status.HTTP_201_CREATED)


def _must_answer(request) -> None:
    if not selectors.may_answer(request.user):
        raise PermissionDenied()


def _answer(request_id: int, viewer) -> dict:
    group = selectors.viewable_group(request_id=request_id, viewer=viewer)
    group.estimate = pricing.estimate(group)
    return GroupRequestSerializer(group).data


def _validated(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


@extend_schema(tags=["Groups"])
class TourProgrammeList(StrictQueryParameters, generics.ListAPIView):
    """A plain list: a museum offers a handful of tours."""

    serializer_class = TourProgrammeSerializer
    pagination_class = None

    def get_queryset(self):
        return TourProgramme.objects.filter(active=True).order_by("name", "pk")

    @extend_schema(
        operation_id="listTourProgrammes",
        summary="The guided tours a group may book",
        description=(
            "The active tour programmes, by name: how long each lasts, the languages it is led "
            "in, the organisations it is for, the most people one guide leads (a group needs "
            "one guide per that many people or part of it) and its fee, per tour or per guide, "
            "charged beside admission."
        ),
        responses={200: TourProgrammeSerializer(many=True), **problems(401)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
