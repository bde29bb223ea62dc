from rest_framework.routers import SimpleRouter

from giftcards.views import GiftCardViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("gift-cards", GiftCardViewSet, basename="giftcards")

urlpatterns = router.urls
