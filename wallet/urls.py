from django.urls import path

from wallet.google_views import TicketGoogleWalletView

urlpatterns = [
    path(
        "tickets/<uuid:ticketId>/wallet/google",
        TicketGoogleWalletView.as_view(),
        name="ticket-google-wallet",
    ),
]
