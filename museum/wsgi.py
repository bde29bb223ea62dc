"""WSGI entry point: `gunicorn museum.wsgi`."""

import gc
import os
from importlib import import_module

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "museum.settings")

application = get_wsgi_application()

# Every view and serializer now, not at the first request, so that the freeze below has them.
import_module(settings.ROOT_URLCONF)

# What is loaded by now (Django, DRF, the URLs, the views: tens of thousands of objects) lives as
# long as the process. Left to the garbage collector, each full collection walks all of it,
# stalling whichever request is running (docs/performance.md). Frozen, it is left out of every
# collection.
gc.freeze()
