from django.urls import path
from rest_framework.routers import SimpleRouter

from groups.views import GroupRequestViewSet, TourProgrammeList

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("group-requests", GroupRequestViewSet, basename="group-requests")

urlpatterns = [
    path("tour-programmes", TourProgrammeList.as_view(), name="tour-programmes"),
    *router.urls,
]
