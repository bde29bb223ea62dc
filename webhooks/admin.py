from django import forms
from django.contrib import admin, messages

from audit.admin import AuditedAdmin
from webhooks.delivery import send_again
from webhooks.http import Refused, check_receiver
from webhooks.models import Attempt, Delivery, EventType, Subscription
from webhooks.services import _changed, new_secret


class SubscriptionForm(forms.ModelForm):
    url = forms.URLField(label="URL", max_length=500, assume_scheme="https")
    event_types = forms.MultipleChoiceField(
        choices=EventType.choices, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = Subscription
        fields = ["owner", "url", "event_types", "active"]

    def clean_url(self):
        url = self.cleaned_data["url"]
        try:
            check_receiver(url)
        except Refused as refusal:
            raise forms.ValidationError(str(refusal)) from None
        return url


@admin.register(Subscription)
class SubscriptionAdmin(AuditedAdmin):
    form = SubscriptionForm
    list_display = ["url", "owner", "active", "disabled_reason", "created_at"]
    list_filter = ["active"]
    search_fields = ["url", "owner__username"]
    readonly_fields = ["disabled_reason", "failing_since", "created_at"]
    autocomplete_fields = ["owner"]
    actions = ["rotate_secrets"]

    def save_model(self, request, obj, form, change):
        new = not change
        if new:
            obj.secret = new_secret()
        if obj.active:
            obj.disabled_reason, obj.failing_since = "", None
        super().save_model(request, obj, form, change)
        _changed()
        if new:
            self.message_user(
                request, f"The signing secret, shown only now: {obj.secret}", messages.WARNING
            )

    @admin.action(description="Rotate the secrets (the old ones sign for 24 hours more)")
    def rotate_secrets(self, request, queryset):
        from webhooks.services import update_subscription

        for subscription in queryset:
            rotated = update_subscription(
                subscription_id=subscription.pk, owner=subscription.owner, rotate_secret=True
            )
            self.message_user(
                request, f"{rotated.url}: new secret, shown only now: {rotated.secret}"
            )


class AttemptInline(admin.TabularInline):
    model = Attempt
    fields = readonly_fields = ("at", "status", "duration_ms", "answer", "error")
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "event_type", "subscription", "state", "attempts"]
    list_filter = ["state", "event_type"]
    search_fields = ["subscription__url", "id"]
    fields = readonly_fields = (
        "id",
        "subscription",
        "event_type",
        "state",
        "attempts",
        "next_attempt_at",
        "record_id",
        "payload",
        "created_at",
    )
    inlines = [AttemptInline]
    actions = ["send_selected_again"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Send again (same webhook-id)", permissions=["change"])
    def send_selected_again(self, request, queryset):
        for delivery in queryset:
            send_again(delivery_id=delivery.pk)
        self.message_user(request, f"{queryset.count()} delivery(ies) sent again.")
