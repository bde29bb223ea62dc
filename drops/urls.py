from django.urls import path

from drops.views import DropQueueView, DropWaitingListView

urlpatterns = [
    path("drops/<int:dropId>/queue", DropQueueView.as_view(), name="drop-queue"),
    path(
        "drops/<int:dropId>/waiting-list",
        DropWaitingListView.as_view(),
        name="drop-waiting-list",
    ),
]
