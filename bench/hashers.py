"""A password hasher for bench.drop's crowd only, never a deployment's."""

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class CheapPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """PBKDF2 at one iteration: 10,000 buyers' first sign-ins in seconds instead of the ~50 CPU
    minutes Django's iterations would take (bench.drop measures one real sign-in apart).

    An algorithm name of its own, so that a real hash is never mistaken for a cheap one."""

    algorithm = "bench_pbkdf2_sha256"
    iterations = 1
