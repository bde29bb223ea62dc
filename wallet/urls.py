from django.urls import path

from wallet.views import TicketAppleWalletPassView

urlpatterns = [
    path(
        "tickets/<uuid:ticketId>/wallet/apple",
        TicketAppleWalletPassView.as_view(),
        name="ticket-apple-wallet-pass",
    ),
]
