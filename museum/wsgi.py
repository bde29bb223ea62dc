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

# What is loaded by now (~100,000 objects: Django, DRF, the URLs, the views) lives as long as
# the process. Left to the garbage collector, each full collection walks all of it, ~65 ms on
# this machine class, stalling whichever request is running; p99 showed it. Frozen, it is left
# out of every collection.
gc.freeze()
