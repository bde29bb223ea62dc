"""A drop's waiting room through the API (docs/operations.md, "A blockbuster drop"): joining its
line and polling one's place. A poll is answered from Redis alone (drops.services.standing_of)
and may be cached by the client for a second."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from drops import services
from drops.serializers import DropPlaceSerializer
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
