from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import (
    SpectacularJSONAPIView,
    SpectacularSwaggerView,
    SpectacularYAMLAPIView,
)

from groups.pages.requests import accept_page, group_form
from museum.health import healthz, readyz
from museum.monitoring import metrics_view
from orders.pages import tickets as tickets_link
from orders.pages.cancel import cancel_page
from orders.pages.donate import donate_page
from orders.providers import STRIPE
from orders.providers.views import demo_payment, notification
from tickets.door import door
from wallet.pages import AppleWalletLinkPage, GoogleWalletLinkPage

api_patterns: list[URLPattern | URLResolver] = [
    path("", include("hours.urls")),
    path("", include("events.urls")),
    path("", include("tickets.urls")),
    path("", include("orders.urls")),
    path("", include("giftcards.urls")),
    path("", include("vouchers.urls")),
    path("", include("groups.urls")),
    path("", include("drops.urls")),
    path("", include("webhooks.urls")),
    path("", include("wallet.urls")),
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
    # A guide's answer page, calendar and iCal feed (groups/pages/guides.py).
    path("groups/guides/", include("groups.pages.guide_urls")),
    # The front desk (desk/urls.py).
    path("desk/", include("desk.urls")),
    # The visitor's own page of an order, opened by the signed link in its email and PDF.
    path("orders/cancel/<str:token>", cancel_page, name="cancel-page"),
    # A paid order's visitor gives to the museum's funds, by the signed link in its email.
    path("orders/donate/<str:token>", donate_page, name="donate-page"),
    # Groups (docs/groups.md): the public form asking for a group's visit, without an account,
    # and an offer's page, by the signed link in its email, that accepts the time offered.
    path("groups/", group_form, name="group-form"),
    path("groups/offers/<str:token>", accept_page, name="group-accept-page"),
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
    # What Apple Wallet calls (docs/wallet.md): the passes' webServiceURL. Apple appends
    # /v1/... to it; extra slashes between are taken, as Apple is vague about one at the end.
    re_path(r"^wallet/apple/+", include("wallet.apple_urls")),
    # The wallet links of the emails and the desk (docs/wallet.md): a pass by a signed link,
    # without an account.
    path(
        "wallet/add/<str:signed>/apple",
        AppleWalletLinkPage.as_view(),
        name="wallet-add-apple",
    ),
    path(
        "wallet/add/<str:signed>/google",
        GoogleWalletLinkPage.as_view(),
        name="wallet-add-google",
    ),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("", RedirectView.as_view(pattern_name="api-docs", permanent=False)),
]

handler400 = "museum.errors.bad_request"
handler404 = "museum.errors.not_found"
handler500 = "museum.errors.server_error"
