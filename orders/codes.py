"""Confirmation codes: what a visitor reads out at the desk or types at the door."""

import re
import secrets
from dataclasses import dataclass

# Crockford's lowercase base32: no i, l, o or u, so a code read aloud is not misheard.
CODE_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
# The prefixes of confirmation codes: a ticket's, by its type, and an order's.
TICKET_CODE_PREFIXES = ("ticket-general-", "ticket-event-")
ORDER_CODE_PREFIX = "order-"
# A membership's card code (Membership.card_code).
MEMBER_CODE_PREFIX = "member-"
# The letters the alphabet leaves out, read as the digits people mistake them for.
MISREAD = str.maketrans({"o": "0", "i": "1", "l": "1"})
# A code as typed: a prefix or none, then 11 characters, spaces or hyphens anywhere between.
_TYPED = re.compile(
    r"(?:(?P<prefix>order|member|ticket(?:[\s-]*(?:general|event))?)[\s-]*)?"
    r"(?P<body>[0-9a-z](?:[\s-]*[0-9a-z]){10})"
)


def new_confirmation_code(prefix: str) -> str:
    """A code for an order ("order") or a ticket ("ticket-general"), e.g. order-2k7m9q-x4b1c."""
    # 55 random bits: unguessable, and a collision (a unique-constraint error) is not a
    # practical worry at a museum's volumes.
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(11))
    return f"{prefix}-{chars[:6]}-{chars[6:]}"


@dataclass(frozen=True)
class TypedCode:
    """The codes a typed text may be: a ticket's (of either type, without its prefix) or an
    order's. Codes are random, so no two share what follows their prefixes."""

    ticket_codes: tuple[str, ...] = ()
    order_code: str | None = None
    member_code: str | None = None


def read_code(text: str) -> TypedCode | None:
    """The confirmation code in `text`, read forgivingly (any case, spaces around and inside, a
    missing prefix or hyphen, O for 0 and I or L for 1); None if it is not shaped like one. The
    desk's search and the door read codes through this one function."""
    typed = text.strip().lower()
    match = _TYPED.fullmatch(typed)
    body = re.sub(r"[\s-]", "", match["body"]).translate(MISREAD) if match else ""
    if match is None or not set(body) <= set(CODE_ALPHABET):
        # A code typed whole is looked up as it is (the door always took any).
        if typed.startswith("ticket-"):
            return TypedCode(ticket_codes=(typed,))
        if typed.startswith(MEMBER_CODE_PREFIX):
            return TypedCode(member_code=typed)
        return TypedCode(order_code=typed) if typed.startswith(ORDER_CODE_PREFIX) else None
    body = f"{body[:6]}-{body[6:]}"
    prefix = re.sub(r"[\s-]", "", match["prefix"] or "")
    if prefix == "order":
        return TypedCode(order_code=ORDER_CODE_PREFIX + body)
    if prefix == "member":
        return TypedCode(member_code=MEMBER_CODE_PREFIX + body)
    tickets = tuple(
        code + body for code in TICKET_CODE_PREFIXES if code.replace("-", "").startswith(prefix)
    )
    if prefix:
        return TypedCode(ticket_codes=tickets)
    return TypedCode(
        ticket_codes=tickets,
        order_code=ORDER_CODE_PREFIX + body,
        member_code=MEMBER_CODE_PREFIX + body,
    )
