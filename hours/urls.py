from django.urls import path
from rest_framework.routers import SimpleRouter

from hours.views import EntrySlotList, MuseumHoursViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("museum-hours", MuseumHoursViewSet, basename="museum-hours")

urlpatterns = [
    path("museum-hours/<str:date>/slots", EntrySlotList.as_view(), name="entry-slots"),
    *router.urls,
]
