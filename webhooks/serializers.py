from rest_framework import serializers

from museum.fields import StrictBooleanField, StrictCharField
from webhooks.models import EventType


class EventTypesField(serializers.ListField):
    child = serializers.ChoiceField(choices=EventType.values)

    def __init__(self, **kwargs):
        super().__init__(min_length=1, max_length=len(EventType.values), **kwargs)


class CreateWebhookRequestSerializer(serializers.Serializer):
    url = StrictCharField(max_length=500, help_text="The receiver: an https URL.")
    eventTypes = EventTypesField(help_text="What the receiver wants to hear of.")

    def validate_url(self, value):
        serializers.URLField().run_validation(value)
        return value


class UpdateWebhookRequestSerializer(CreateWebhookRequestSerializer):
    """Each field optional; only those sent change."""

    active = StrictBooleanField(
        required=False, help_text="true turns a disabled subscription on again."
    )
    rotateSecret = StrictBooleanField(
        required=False,
        help_text="true: a new secret, answered once; the old one still signs for 24 hours.",
    )

    def get_fields(self):
        fields = super().get_fields()
        for field in fields.values():
            field.required = False
        return fields


class WebhookSerializer(serializers.Serializer):
    webhookId = serializers.UUIDField(source="id")
    url = serializers.CharField()
    eventTypes = serializers.ListField(
        source="event_types", child=serializers.ChoiceField(choices=EventType.values)
    )
    active = serializers.BooleanField()
    disabledReason = serializers.CharField(
        source="disabled_reason",
        required=False,
        help_text="Why it was disabled (only when active is false).",
    )
    createdAt = serializers.DateTimeField(source="created_at")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if instance.active:
            del data["disabledReason"]
        return data


class WebhookWithSecretSerializer(WebhookSerializer):
    secret = serializers.CharField(
        help_text="whsec_ and base64: verifies the signatures. Shown only now; keep it."
    )
