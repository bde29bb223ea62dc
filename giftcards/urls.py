from django.urls import path
from rest_framework.routers import SimpleRouter

from giftcards.views import GiftCardPdfView, GiftCardViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("gift-cards", GiftCardViewSet, basename="giftcards")

urlpatterns = [
    path("gift-cards/<uuid:giftCardId>/card.pdf", GiftCardPdfView.as_view(), name="gift-card-pdf"),
    *router.urls,
]
