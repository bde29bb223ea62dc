"""The bare project's one URL: the service's floor view, at the same path (bench/floor.py)."""

from django.urls import path

from bench import FLOOR_PATH
from bench.floor import FloorView

urlpatterns = [path(FLOOR_PATH.lstrip("/"), FloorView.as_view())]
