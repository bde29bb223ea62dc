"""Confirmation codes: what a visitor reads out at the desk or types at the door."""

import secrets

# Crockford's lowercase base32: no i, l, o or u, so a code read aloud is not misheard.
CODE_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def new_confirmation_code(prefix: str) -> str:
    """A code for an order ("order") or a ticket ("ticket-general"), e.g. order-2k7m9q-x4b1c."""
    # 55 random bits: unguessable, and a collision (a unique-constraint error) is not a
    # practical worry at a museum's volumes.
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(11))
    return f"{prefix}-{chars[:6]}-{chars[6:]}"
