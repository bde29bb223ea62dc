from django.urls import path

from groups.views import TourProgrammeList

urlpatterns = [
    path("tour-programmes", TourProgrammeList.as_view(), name="tour-programmes"),
]
