from rest_framework.routers import SimpleRouter

from hours.views import MuseumHoursViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("museum-hours", MuseumHoursViewSet, basename="museum-hours")

urlpatterns = router.urls
