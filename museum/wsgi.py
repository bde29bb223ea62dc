"""WSGI entry point: `gunicorn museum.wsgi`."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "museum.settings")

application = get_wsgi_application()
