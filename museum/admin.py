from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.contrib.auth.models import User

from museum.accounts import check_username_free


class MuseumUserChangeForm(UserChangeForm):
    """Renaming an account may not take another's name spelled in another case."""

    def clean_username(self):
        username = self.cleaned_data["username"]
        try:
            check_username_free(username, exclude_pk=self.instance.pk)
        except forms.ValidationError as exc:
            raise forms.ValidationError(exc.messages, code="username_taken") from None
        return username


class ReadOnlyAdmin(admin.ModelAdmin):
    """The admin of what the services alone write (records, payments, orders): staff look, and
    act only through its actions, never add, change or delete a row here."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


# Django's UserCreationForm already refuses a name that differs only in case; its change form
# does not.
admin.site.unregister(User)


@admin.register(User)
class MuseumUserAdmin(UserAdmin):
    form = MuseumUserChangeForm
