from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.exceptions import ParseError
from rest_framework.response import Response

from museum.permissions import HasPermission
from museum.query import StrictQueryParameters
from museum.schema import problems
from webhooks import services
from webhooks.models import EventType, Subscription
from webhooks.serializers import (
    CreateWebhookRequestSerializer,
    UpdateWebhookRequestSerializer,
    WebhookSerializer,
    WebhookWithSecretSerializer,
)

WEBHOOK_ID = OpenApiParameter(
    "webhookId", OpenApiTypes.UUID, OpenApiParameter.PATH, description="A webhook subscription."
)

# The Museum API's own event types: the subscriptions it shows (OCTO's are /octo/webhooks').
MUSEUM_TYPES = EventType.values


class MayManageWebhooks(HasPermission):
    permission = "webhooks.manage_own_webhooks"


@extend_schema_view(
    list=extend_schema(
        operation_id="listWebhooks",
        summary="Your webhook subscriptions",
        responses={200: WebhookSerializer(many=True), **problems(401, 403)},
    ),
    create=extend_schema(
        operation_id="createWebhook",
        summary="Subscribe a URL to webhooks",
        description="The answer carries the signing secret, once.",
        request=CreateWebhookRequestSerializer,
        responses={201: WebhookWithSecretSerializer, **problems(400, 401, 403, 415)},
    ),
    retrieve=extend_schema(
        operation_id="getWebhook",
        summary="A webhook subscription",
        parameters=[WEBHOOK_ID],
        responses={200: WebhookSerializer, **problems(401, 403, 404)},
    ),
    partial_update=extend_schema(
        operation_id="updateWebhook",
        summary="Change a webhook subscription, or rotate its secret",
        description="With rotateSecret, the answer carries the new secret, once.",
        parameters=[WEBHOOK_ID],
        request=UpdateWebhookRequestSerializer,
        responses={200: WebhookWithSecretSerializer, **problems(400, 401, 403, 404, 415)},
    ),
    destroy=extend_schema(
        operation_id="deleteWebhook",
        summary="Delete a webhook subscription",
        parameters=[WEBHOOK_ID],
        responses={204: None, **problems(401, 403, 404)},
    ),
)
@extend_schema(tags=["Webhooks"])
class WebhookViewSet(StrictQueryParameters, viewsets.GenericViewSet):
    """A partner's own subscriptions; staff manage everyone's in the admin."""

    serializer_class = WebhookSerializer
    permission_classes = [MayManageWebhooks]
    pagination_class = None
    queryset = Subscription.objects.none()  # what the schema reads
    lookup_url_kwarg = "webhookId"
    lookup_value_converter = "uuid"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def accepted_query_parameters(self) -> frozenset[str]:
        return frozenset()  # a plain list: no filters, no paging

    def list(self, request):
        mine = Subscription.objects.filter(owner=request.user)
        own_types = [s for s in mine if services.speaks_only(s, MUSEUM_TYPES)]
        return Response(WebhookSerializer(own_types, many=True).data)

    def create(self, request):
        data = self._validated(CreateWebhookRequestSerializer)
        subscription = services.create_subscription(
            owner=request.user, url=data["url"], event_types=data["eventTypes"]
        )
        location = reverse("webhooks-detail", kwargs={"webhookId": subscription.pk})
        return Response(
            WebhookWithSecretSerializer(subscription).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    def retrieve(self, request, webhookId):
        subscription = services.subscription_of(
            subscription_id=webhookId, owner=request.user, types=MUSEUM_TYPES
        )
        return Response(WebhookSerializer(subscription).data)

    def partial_update(self, request, webhookId):
        if request.stream is None:
            raise ParseError("Send the fields to change as a JSON object.")
        data = self._validated(UpdateWebhookRequestSerializer)
        subscription = services.update_subscription(
            subscription_id=webhookId,
            owner=request.user,
            url=data.get("url"),
            event_types=data.get("eventTypes"),
            active=data.get("active"),
            rotate_secret=data.get("rotateSecret", False),
            types=MUSEUM_TYPES,
        )
        rotated = data.get("rotateSecret", False)
        serializer = WebhookWithSecretSerializer if rotated else WebhookSerializer
        return Response(serializer(subscription).data)

    def destroy(self, request, webhookId):
        services.delete_subscription(
            subscription_id=webhookId, owner=request.user, types=MUSEUM_TYPES
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _validated(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data
