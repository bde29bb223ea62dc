from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.utils import timezone

from octo.keys import issue_api_key, revoke_api_key
from octo.models import ApiKey, Booking, CategoryUnit, PartnerTerms


class NewKeyForm(forms.ModelForm):
    class Meta:
        model = ApiKey
        fields = ["account", "name"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        account = self.fields["account"]
        assert isinstance(account, forms.ModelChoiceField)
        account.queryset = (
            get_user_model()
            .objects.filter(groups__permissions__codename="sell_on_account")
            .distinct()
        )


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are issued here (the key shown once) and revoked, never edited."""

    list_display = ["name", "account", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    actions = ["revoke"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = NewKeyForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["account", "name", "prefix", "created_at", "last_used_at", "revoked_at"]

    def save_model(self, request, obj, form, change):
        if change:
            return
        api_key, key = issue_api_key(
            account=form.cleaned_data["account"], name=form.cleaned_data["name"], by=request.user
        )
        obj.pk = api_key.pk
        messages.warning(request, f"The new key, shown only now: {key}")

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request, queryset):
        for key_id in queryset.filter(revoked_at=None).values_list("pk", flat=True):
            revoke_api_key(key_id=key_id, by=request.user)
        messages.success(request, f"Revoked at {timezone.now():%H:%M}.")


@admin.register(PartnerTerms)
class PartnerTermsAdmin(admin.ModelAdmin):
    list_display = ["account", "commission_percent", "museum_sends_tickets"]


@admin.register(CategoryUnit)
class CategoryUnitAdmin(admin.ModelAdmin):
    list_display = ["category", "unit_type", "min_age", "max_age", "id_required"]


@admin.register(Booking)
class BookingAdmin(admin.ModelAdmin):
    list_display = ["uuid", "partner", "order", "reseller_reference", "net_total", "created_at"]
    search_fields = ["uuid", "reseller_reference", "order__confirmation_code"]
    readonly_fields = [field.name for field in Booking._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
