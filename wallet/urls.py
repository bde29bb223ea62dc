from django.urls import path

from wallet.google_views import (
    GiftCardGoogleWalletView,
    MembershipGoogleWalletView,
    TicketGoogleWalletView,
)
from wallet.views import (
    GiftCardAppleWalletPassView,
    MembershipAppleWalletPassView,
    TicketAppleWalletPassView,
)

urlpatterns = [
    path(
        "tickets/<uuid:ticketId>/wallet/apple",
        TicketAppleWalletPassView.as_view(),
        name="ticket-apple-wallet-pass",
    ),
    path(
        "tickets/<uuid:ticketId>/wallet/google",
        TicketGoogleWalletView.as_view(),
        name="ticket-google-wallet",
    ),
    path(
        "memberships/<uuid:membershipId>/wallet/apple",
        MembershipAppleWalletPassView.as_view(),
        name="membership-apple-wallet-pass",
    ),
    path(
        "memberships/<uuid:membershipId>/wallet/google",
        MembershipGoogleWalletView.as_view(),
        name="membership-google-wallet",
    ),
    path(
        "gift-cards/<uuid:giftCardId>/wallet/apple",
        GiftCardAppleWalletPassView.as_view(),
        name="gift-card-apple-wallet-pass",
    ),
    path(
        "gift-cards/<uuid:giftCardId>/wallet/google",
        GiftCardGoogleWalletView.as_view(),
        name="gift-card-google-wallet",
    ),
]
