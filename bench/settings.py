"""The benchmark's settings: production's (museum/settings.py), routed through bench/urls.py so
that the floor exists only here, never in a deployment of the service."""

from museum.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
