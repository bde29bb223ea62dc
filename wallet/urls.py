from django.urls import path

from wallet.google_views import TicketGoogleWalletView
from wallet.views import TicketAppleWalletPassView

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
]
