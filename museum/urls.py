from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from django.views.generic import RedirectView
from drf_spectacular.views import (
    SpectacularJSONAPIView,
    SpectacularSwaggerView,
    SpectacularYAMLAPIView,
)

from museum.health import healthz, readyz
from museum.monitoring import metrics_view
from orders import desk, desk_members, tickets_link
from orders.cancel_page import cancel_page
from orders.providers import STRIPE
from orders.providers.views import demo_payment, notification
from tickets.door import door

api_patterns: list[URLPattern | URLResolver] = [
    path("", include("hours.urls")),
    path("", include("events.urls")),
    path("", include("tickets.urls")),
    path("", include("orders.urls")),
    path("", include("webhooks.urls")),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi-json"),
    path("openapi.yaml", SpectacularYAMLAPIView.as_view(), name="openapi-yaml"),
    # Swagger UI runs an inline script and styles: no Content-Security-Policy of ours here
    # (settings.CONTENT_SECURITY_POLICY's EXCLUDE_URL_PREFIXES).
    path("docs/", SpectacularSwaggerView.as_view(url_name="openapi-json"), name="api-docs"),
]

urlpatterns = [
    path("v1.1/", include(api_patterns)),
    # OCTO, for resellers (docs/octo.md): its own paths, errors and schema.
    path("octo/", include("octo.urls")),
    path("admin/", admin.site.urls),
    # Django's set_language: the admin's language switch (templates/admin/base_site.html).
    path("i18n/", include("django.conf.urls.i18n")),
    path("door/", door, name="door"),
    path("desk/", desk.today, name="desk"),
    path("desk/sell/", desk.sell, name="desk-sell"),
    path("desk/slots/", desk.slots, name="desk-slots"),
    path("desk/orders/<uuid:order_id>/", desk.order_page, name="desk-order"),
    path("desk/orders/<uuid:order_id>/tickets.pdf", desk.order_pdf, name="desk-order-pdf"),
    path(
        "desk/orders/<uuid:order_id>/cancel/confirm",
        desk.confirm_cancel,
        name="desk-order-confirm-cancel",
    ),
    path(
        "desk/orders/<uuid:order_id>/<str:what>",
        desk.change_order,
        name="desk-order-change",
    ),
    # --- The desk's members (issue 37, helper mcard) ---
    path("desk/members/", desk_members.members, name="desk-members"),
    path("desk/members/sell/", desk_members.sell_member, name="desk-member-sell"),
    path("desk/members/<uuid:membership_id>/", desk_members.member_page, name="desk-member"),
    path(
        "desk/members/<uuid:membership_id>/renew",
        desk_members.renew_member,
        name="desk-member-renew",
    ),
    path(
        "desk/members/<uuid:membership_id>/visit",
        desk_members.book_visit,
        name="desk-member-visit",
    ),
    path(
        "desk/members/<uuid:membership_id>/card.pdf",
        desk_members.member_card,
        name="desk-member-card",
    ),
    path(
        "desk/members/<uuid:membership_id>/gift.pdf",
        desk_members.gift_card,
        name="desk-member-gift-card",
    ),
    # --- end of the desk's members ---
    # The visitor's own page of an order, opened by the signed link in its email and PDF.
    path("orders/cancel/<str:token>", cancel_page, name="cancel-page"),
    # An order's tickets PDF by its signed link, for a reseller's customer (OCTO's PDF_URL).
    path("orders/tickets/<str:token>.pdf", tickets_link.tickets_pdf, name="tickets-link"),
    # What payment providers call (docs/payments.md): outside the API and its schema.
    path(
        "payments/stripe/webhook",
        notification,
        {"provider_name": STRIPE},
        name="stripe-webhook",
    ),
    path("payments/demo/<uuid:payment_id>", demo_payment, name="demo-payment"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("", RedirectView.as_view(pattern_name="api-docs", permanent=False)),
]

handler400 = "museum.errors.bad_request"
handler404 = "museum.errors.not_found"
handler500 = "museum.errors.server_error"
