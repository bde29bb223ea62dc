from django.urls import path

from drops.views import DropQueueView

urlpatterns = [
    path("drops/<int:dropId>/queue", DropQueueView.as_view(), name="drop-queue"),
]
