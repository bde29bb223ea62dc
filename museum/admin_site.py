"""The admin site: Django's, whose "View site" leads to the staff pages the account may use (the
desk, else the door) rather than to the root address, which is the API's documentation."""

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.urls import reverse

# The permissions are named, not imported: the project's plumbing imports no app.
SELL_AT_DESK, CHECK_IN = "orders.sell_at_desk", "orders.check_in_ticket"


class MuseumAdminSite(admin.AdminSite):
    site_header = site_title = "Museum administration"
    index_title = "Programme, opening hours and accounts"

    def each_context(self, request):
        context = super().each_context(request)
        context["site_url"] = staff_pages(request.user)
        return context


def staff_pages(user) -> str | None:
    """Where "View site" leads: the desk for those who sell there, the door for those who only
    check tickets in, nowhere for the rest."""
    if user.has_perm(SELL_AT_DESK):
        return reverse("desk")
    if user.has_perm(CHECK_IN):
        return reverse("door")
    return None


class MuseumAdminConfig(AdminConfig):
    """Django's admin app with our site as `admin.site` (Django's "Overriding the default admin
    site")."""

    default_site = "museum.admin_site.MuseumAdminSite"
