"""WSGI entry point of the bare floor: `gunicorn bench.bare.wsgi`.

Its settings whatever the environment says: the benchmark starts it with the service's."""

import os

from django.core.wsgi import get_wsgi_application

os.environ["DJANGO_SETTINGS_MODULE"] = "bench.bare.settings"

application = get_wsgi_application()
