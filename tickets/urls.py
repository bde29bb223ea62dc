from django.urls import path
from rest_framework.routers import SimpleRouter

from tickets.views import TicketCodeView, TicketViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("tickets", TicketViewSet, basename="tickets")

urlpatterns = [
    path("tickets/<uuid:ticketId>/qr", TicketCodeView.as_view(), name="ticket-code"),
    *router.urls,
]
