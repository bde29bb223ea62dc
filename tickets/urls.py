from django.urls import path
from rest_framework.routers import SimpleRouter

from tickets.views import TicketImageView, TicketViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("tickets", TicketViewSet, basename="tickets")

urlpatterns = [
    path("tickets/<uuid:ticketId>/qr", TicketImageView.as_view(), name="ticket-image"),
    *router.urls,
]
