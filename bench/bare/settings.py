"""A minimal Django + DRF project: DRF's defaults, one APIView, no middleware, no database."""

SECRET_KEY = "bench-bare-floor-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
INSTALLED_APPS = ["rest_framework"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.bare.urls"
DATABASES: dict = {}
USE_TZ = True
# DRF's defaults, but for the anonymous user, which would need django.contrib.auth installed.
REST_FRAMEWORK = {"UNAUTHENTICATED_USER": None}
