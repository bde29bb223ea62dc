"""A drop's waiting room through the API (docs/operations.md, "A blockbuster drop"): joining its
line and polling one's place, and after the last place its waiting list. A poll is answered from
Redis alone (drops.services.standing_of) and may be cached by the client for a second."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from drops import services, waiting_list
from drops.serializers import DropPlaceSerializer, WaitingEntrySerializer, WaitingListJoinSerializer
from museum.schema import problems

DROP_ID = OpenApiParameter("dropId", OpenApiTypes.INT, OpenApiParameter.PATH)


def _answer(place: services.Place, *, status_code: int = status.HTTP_200_OK) -> Response:
    response = Response(DropPlaceSerializer(place).data, status=status_code)
    response["Cache-Control"] = "private, max-age=1"
    if place.poll_after:
        response["Retry-After"] = str(place.poll_after)
    return response


class DropQueueView(APIView):
    @extend_schema(
        operation_id="joinDropQueue",
        tags=["Drops"],
        summary="Join a drop's waiting room",
        description=(
            "One place per account and per email address: joining again answers the same "
            "place (201 the first time). Who joins before the sale opens is drawn a random "
            "place at the opening; after it, first come, first served. Before the waiting room "
            "opens 409 `queue_not_open`; after it closed 409 `drop_closed`; another account of "
            "the same address in line 409 `already_in_line`; Redis away 503 `queue_paused`."
        ),
        parameters=[DROP_ID],
        request=None,
        responses={200: DropPlaceSerializer, 201: DropPlaceSerializer,
                   **problems(401, 404, 409, 503)},
    )  # fmt: skip
    def post(self, request, dropId: int):
        place, joined = services.join(dropId, request.user)
        return _answer(place, status_code=status.HTTP_201_CREATED if joined else status.HTTP_200_OK)

    @extend_schema(
        operation_id="getDropQueuePlace",
        tags=["Drops"],
        summary="Where you stand in a drop's waiting room",
        description=(
            "Your place, the people before you, an estimated wait, and `likelySoldOut`; when "
            "your turn comes, `admission` with a token to buy with (the Queue-Token header), "
            "once, before `expiresAt`. Ask again after `pollAfterSeconds` (also Retry-After). "
            "Not in line 404 `not_in_line`; Redis away 503 `queue_paused`."
        ),
        parameters=[DROP_ID],
        responses={200: DropPlaceSerializer, **problems(401, 404, 503)},
    )
    def get(self, request, dropId: int):
        return _answer(services.standing_of(dropId, request.user))


class DropWaitingListView(APIView):
    @extend_schema(
        operation_id="joinDropWaitingList",
        tags=["Drops"],
        summary="Join a drop's waiting list",
        description=(
            "Once the waiting room told you the places are sold out (`state` `sold_out`), ask "
            "to be offered `quantity` tickets (at most the drop's most per buyer) when places "
            "come back: they are offered in the order of asking, by email, as a voucher that "
            "keeps them for a few hours and buys without a Queue-Token. Joining again answers "
            "the same entry (201 the first time). Not sold out for you 409 `not_sold_out`; "
            "Redis away 503 `queue_paused`."
        ),
        parameters=[DROP_ID],
        request=WaitingListJoinSerializer,
        responses={200: WaitingEntrySerializer, 201: WaitingEntrySerializer,
                   **problems(400, 401, 404, 409, 503)},
    )  # fmt: skip
    def post(self, request, dropId: int):
        data = WaitingListJoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry, joined = waiting_list.join_waiting_list(
            drop_id=dropId, account=request.user, quantity=data.validated_data["quantity"]
        )
        return Response(
            WaitingEntrySerializer(entry).data,
            status=status.HTTP_201_CREATED if joined else status.HTTP_200_OK,
        )

    @extend_schema(
        operation_id="getDropWaitingListEntry",
        tags=["Drops"],
        summary="Your entry on a drop's waiting list",
        description=(
            "Your place on the list and, once places are offered to you, the voucher that buys "
            "them and until when. Not on the list 404 `not_on_waiting_list`."
        ),
        parameters=[DROP_ID],
        responses={200: WaitingEntrySerializer, **problems(401, 404)},
    )
    def get(self, request, dropId: int):
        entry = waiting_list.waiting_entry_of(drop_id=dropId, account=request.user)
        return Response(WaitingEntrySerializer(entry).data)
