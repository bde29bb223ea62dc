"""The webhooks in our served schema (OpenAPI `webhooks:`): what a receiver is sent."""

from drf_spectacular.utils import OpenApiResponse, OpenApiWebhook, extend_schema
from rest_framework import serializers

from events.serializers import SpecialEventResponseSerializer
from giftcards.serializers import TransactionEventSerializer
from groups.serializers import GroupRequestSerializer
from orders.serializers import MembershipSerializer, OrderSerializer
from vouchers.serializers import VoucherRedeemedEventSerializer
from webhooks.models import EventType

RECEIVED = {202: OpenApiResponse(description="Data accepted.")}
SIGNED = (
    " Signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`): "
    "verify with the subscription's secret. The same `webhook-id` on every retry."
)


class OrderWebhookSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=[t for t in EventType.values if t.startswith("order.")])
    timestamp = serializers.DateTimeField()
    # Named as Standard Webhooks names it; this serializer only describes the schema.
    data = OrderSerializer(help_text="The order as GET /orders/{orderId} answers it.")  # type: ignore[assignment]


class MembershipWebhookSerializer(serializers.Serializer):
    type = serializers.ChoiceField(
        choices=[t for t in EventType.values if t.startswith("membership.")]
    )
    timestamp = serializers.DateTimeField()
    data = MembershipSerializer(  # type: ignore[assignment]
        help_text="The membership as GET /memberships/{membershipId} answers it, without a "
        "gift's code."
    )


class GiftCardWebhookSerializer(serializers.Serializer):
    type = serializers.ChoiceField(
        choices=[t for t in EventType.values if t.startswith("giftcard.")]
    )
    timestamp = serializers.DateTimeField()
    data = TransactionEventSerializer(  # type: ignore[assignment]
        help_text="The move of the card's ledger, and what the card holds after it."
    )


class VoucherWebhookSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=[EventType.VOUCHER_REDEEMED])
    timestamp = serializers.DateTimeField()
    data = VoucherRedeemedEventSerializer(  # type: ignore[assignment]
        help_text="The voucher, the order that used it, its uses and the discount it gave."
    )


class GroupRequestWebhookSerializer(serializers.Serializer):
    type = serializers.ChoiceField(
        choices=[t for t in EventType.values if t.startswith("group_request.")]
    )
    timestamp = serializers.DateTimeField()
    data = GroupRequestSerializer(  # type: ignore[assignment]
        help_text="The request as GET /group-requests/{requestId} answers it."
    )


class WebhookEnvelopeSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=EventType.values)
    timestamp = serializers.DateTimeField()
    data = serializers.DictField(help_text="What the type says happened.")  # type: ignore[assignment]


def _webhook(name: str, summary: str, body) -> OpenApiWebhook:
    return OpenApiWebhook(
        name=name,
        decorator=extend_schema(
            operation_id=name,
            summary=summary,
            description=summary + "." + SIGNED,
            request={"application/json": body},
            responses=RECEIVED,
        ),
    )


PUBLISH_NEW_EVENT = OpenApiWebhook(
    name="publishNewEvent",
    decorator=extend_schema(
        operation_id="publishNewEvent",
        summary="New special event added",
        description="Publish details of a new or updated event." + SIGNED,
        tags=["Events"],
        request={"application/json": SpecialEventResponseSerializer},
        responses=RECEIVED,
    ),
)
ORDER_EVENTS = _webhook(
    "orderEvent",
    "An order confirmed, cancelled, expired or refunded (order.*)",
    OrderWebhookSerializer,
)
OTHER_EVENTS = _webhook(
    "museumEvent",
    "A ticket checked in, an event called off, a slot's places changed",
    WebhookEnvelopeSerializer,
)
MEMBERSHIP_EVENTS = _webhook(
    "membershipEvent",
    "A membership activated, renewed, expired or cancelled (membership.*)",
    MembershipWebhookSerializer,
)
GIFT_CARD_EVENTS = _webhook(
    "giftCardEvent",
    "A gift card issued, or its balance moved (giftcard.*)",
    GiftCardWebhookSerializer,
)
VOUCHER_EVENTS = _webhook(
    "voucherEvent",
    "A voucher used by an order confirmed (voucher.redeemed)",
    VoucherWebhookSerializer,
)
GROUP_REQUEST_EVENTS = _webhook(
    "groupRequestEvent",
    "A group's request received, approved, offered another time, declined, expired or changed "
    "(group_request.*)",
    GroupRequestWebhookSerializer,
)
