import base64
import datetime as dt
import uuid

import pytest

from orders import tokens

DAY = dt.date(2030, 1, 1)
SEED = base64.urlsafe_b64encode(bytes(range(32))).decode()
OLD_SEED = base64.urlsafe_b64encode(bytes(range(32, 64))).decode()


def token_for(n: int = 1) -> str:
    return tokens.sign_ticket(ticket_id=uuid.UUID(int=n), ticket_date=DAY)


def token_with(character: str) -> str:
    """A token whose base64url text holds `character` (signatures differ per ticket)."""
    return next(token for n in range(200) if character in (token := token_for(n))[4:])


def test_the_canonical_token_verifies():
    claim = tokens.verify_ticket_token(token_for(7))

    assert (claim.ticket_id, claim.date) == (uuid.UUID(int=7), DAY)


def with_unused_bits_set(token: str) -> str:
    # 88 bytes are 118 characters: the last carries 2 bits of the token and 4 unused bits.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(token[-1])
    assert last & 0b1111 == 0
    return token[:-1] + alphabet[last | 0b0001]


def inserted(text: str, *, at: int = 40) -> str:
    token = token_for()
    return token[:at] + text + token[at:]


# Each decodes to the same bytes as the canonical token (a lenient decoder ignores padding,
# characters outside the alphabet and unused bits, and reads + and / as - and _).
SPELLINGS = {
    "padded": lambda: token_for() + "==",
    "excess padding": lambda: token_for() + "=====",
    "space inside": lambda: inserted(" ") + "==",
    "newline inside": lambda: inserted("\n") + "==",
    "foreign character": lambda: inserted("!") + "==",
    "plus for minus": lambda: token_with("-").replace("-", "+"),
    "slash for underscore": lambda: token_with("_").replace("_", "/"),
    "unused bits set": lambda: with_unused_bits_set(token_for()),
}


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_only_the_canonical_spelling_of_a_token_verifies(spelling):
    other = SPELLINGS[spelling]()

    with pytest.raises(tokens.InvalidTicketToken):
        tokens.verify_ticket_token(other)


def test_a_token_signed_before_a_secret_key_rotation_still_verifies(settings):
    settings.MUSEUM_TICKET_SIGNING_KEYS = []
    settings.SECRET_KEY = "the old secret, long enough to be a real one in a test"
    issued = token_for()

    settings.SECRET_KEY = "the new secret, also long enough to be a real one here"
    settings.SECRET_KEY_FALLBACKS = ["the old secret, long enough to be a real one in a test"]

    assert tokens.verify_ticket_token(issued).ticket_id == uuid.UUID(int=1)
    new = token_for()
    assert new != issued  # new tickets are signed with the new secret's key
    settings.SECRET_KEY_FALLBACKS = []
    with pytest.raises(tokens.InvalidTicketToken):  # the old key is gone once dropped
        tokens.verify_ticket_token(issued)
    assert tokens.verify_ticket_token(new).ticket_id == uuid.UUID(int=1)


def test_explicit_keys_sign_and_an_old_one_kept_after_them_still_verifies(settings):
    settings.MUSEUM_TICKET_SIGNING_KEYS = [OLD_SEED]
    issued = token_for()

    settings.MUSEUM_TICKET_SIGNING_KEYS = [SEED, OLD_SEED]
    settings.SECRET_KEY = "a rotated secret key has nothing to do with explicit keys"

    assert tokens.verify_ticket_token(issued).ticket_id == uuid.UUID(int=1)
    assert token_for()[4:12] != issued[4:12]  # new tickets name the new key
    assert len(tokens.public_keys()) == 2
