"""A gift card's code: 16 characters of an alphabet without the look-alikes (no 0 and O, no 1,
I and L), shown in groups of four (`K7QX-M2PA-9RTD-HW4C`), read whatever the case, spaces or
hyphens: 79 random bits, so a guess is hopeless even before the lookup's rate limit."""

import re
import secrets

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
LENGTH = 16


def new_code() -> str:
    return _grouped("".join(secrets.choice(ALPHABET) for _ in range(LENGTH)))


def read_code(typed: str) -> str | None:
    """The code `typed` spells, as stored; None if it cannot be one."""
    chars = re.sub(r"[\s-]", "", typed or "").upper()
    if len(chars) != LENGTH or any(char not in ALPHABET for char in chars):
        return None
    return _grouped(chars)


def _grouped(chars: str) -> str:
    return "-".join(chars[i : i + 4] for i in range(0, LENGTH, 4))
