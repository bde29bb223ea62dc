from rest_framework.routers import SimpleRouter

from events.views import SpecialEventViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("special-events", SpecialEventViewSet, basename="special-events")

urlpatterns = router.urls
