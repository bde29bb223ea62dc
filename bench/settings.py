"""The benchmark's settings: production's (museum/settings.py), routed through bench/urls.py so
that the floor exists only here, never in a deployment of the service."""

from django.conf import global_settings

from museum.settings import *  # noqa: F403
from museum.settings import envbool

ROOT_URLCONF = "bench.urls"

# bench.drop's 10,000 buyers each sign in once before its clock starts, one password check at a
# time per address: with Django's PBKDF2 that alone is ~50 CPU minutes. First in the list, so that
# the buyers' passwords are hashed with it and a check never upgrades them to the real hasher.
if envbool("BENCH_CHEAP_PASSWORD_HASHER"):
    PASSWORD_HASHERS = [
        "bench.hashers.CheapPBKDF2PasswordHasher",
        *global_settings.PASSWORD_HASHERS,
    ]
