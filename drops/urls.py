from django.urls import path, register_converter
from django.urls.converters import IntConverter

from drops.views import DropQueueView, DropWaitingListView


class DropIdConverter(IntConverter):
    """A drop's id as its key can be (a 64-bit integer): a longer number names no drop, and is
    answered 404 before a lookup the database cannot hold."""

    regex = "[0-9]{1,18}"


register_converter(DropIdConverter, "drop_id")

urlpatterns = [
    path("drops/<drop_id:dropId>/queue", DropQueueView.as_view(), name="drop-queue"),
    path(
        "drops/<drop_id:dropId>/waiting-list",
        DropWaitingListView.as_view(),
        name="drop-waiting-list",
    ),
]
