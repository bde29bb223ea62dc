from rest_framework.routers import SimpleRouter

from groups.views import GroupRequestViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("group-requests", GroupRequestViewSet, basename="group-requests")

urlpatterns = router.urls
