"""The service's URLs plus the benchmark's floor at FLOOR_PATH (bench/floor.py)."""

from django.urls import path

from bench import FLOOR_PATH
from bench.floor import FloorView
from museum.urls import handler400, handler404, handler500
from museum.urls import urlpatterns as service_urlpatterns

urlpatterns = [path(FLOOR_PATH.lstrip("/"), FloorView.as_view()), *service_urlpatterns]

__all__ = ["handler400", "handler404", "handler500", "urlpatterns"]
