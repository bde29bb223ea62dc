"""The signed links that add a ticket, a member card or a gift card to a phone's wallet, for the
emails and the desk: `{MUSEUM_PUBLIC_URL}/wallet/add/{signed}/apple` (the .pkpass) and
`.../google` (on to Google's save link), served by wallet/pages.py without an account.

The API's passes need the visitor signed in, which a link in an email cannot be. So the link
itself names what it adds: the kind and id, signed with Django's signing and a salt of its own
(it opens no other page, and no other signed link opens it). It grants what the email it comes
in already grants: the ticket's PDF carries the same signed token the pass does, the member's
card and the gift card's PDF the same code. It therefore does not expire, as the PDF does not:
a link opened months later still gives the pass as it is then (a cancelled ticket's voided, as
the API's), and refuses as the API does what has no pass (an order never paid, a membership
cancelled). A link altered by hand names nothing: 404.

Only the wallets the museum has set up get a link (none without either).
"""

import uuid

from django.conf import settings
from django.core import signing
from django.urls import reverse
from django.utils.translation import gettext as _

from giftcards.models import GiftCard
from giftcards.selectors import issued_card
from museum.exceptions import NotFound
from orders.models import Membership, Ticket
from orders.selectors import membership_with_card
from tickets.selectors import printable_ticket
from wallet import apple, google
from wallet.content import GIFT_CARD, MEMBERSHIP, TICKET

SALT = "museum.wallet.add-link"
APPLE, GOOGLE = "apple", "google"

Owner = Ticket | Membership | GiftCard


def sign(*, kind: str, owner_id: uuid.UUID) -> str:
    """What a link names, signed: compact JSON of the kind and the id, URL-safe. Without a
    timestamp (it would never be read): the same link each time it is made, in the email and
    at the desk."""
    return signing.Signer(salt=SALT).sign_object([kind, owner_id.hex], compress=True)


def named_by(signed: str) -> tuple[str, uuid.UUID] | None:
    """The kind and id a link names; None for one not signed by us (or altered)."""
    try:
        kind, owner_id = signing.Signer(salt=SALT).unsign_object(signed)
        return kind, uuid.UUID(hex=owner_id)
    except (signing.BadSignature, ValueError, TypeError):
        return None


def wallet_links(
    *,
    ticket: Ticket | None = None,
    membership: Membership | None = None,
    gift_card: GiftCard | None = None,
) -> list[tuple[str, str]]:
    """The links (words in the active language, address) that add the ticket, the membership's
    card or the gift card (one of them) to a wallet: one per wallet set up, none without. The
    caller asks whether it has a pass to give (a valid ticket, an active membership, an issued
    card); the page refuses otherwise."""
    kind, owner = _which(ticket=ticket, membership=membership, gift_card=gift_card)
    to_apple = apple.configured()
    to_google = google.is_configured()
    if not (to_apple or to_google):
        return []
    signed = sign(kind=kind, owner_id=owner.pk)
    links = []
    if to_apple:
        links.append((_("Add to Apple Wallet"), _address(signed, APPLE)))
    if to_google:
        links.append((_("Add to Google Wallet"), _address(signed, GOOGLE)))
    return links


def _which(**given: Owner | None) -> tuple[str, Owner]:
    kinds = {"ticket": TICKET, "membership": MEMBERSHIP, "gift_card": GIFT_CARD}
    [(name, owner)] = [(name, owner) for name, owner in given.items() if owner is not None]
    return kinds[name], owner


def _address(signed: str, wallet: str) -> str:
    return settings.MUSEUM_PUBLIC_URL + reverse(f"wallet-add-{wallet}", args=[signed])


def owner_of(kind: str, owner_id: uuid.UUID) -> Owner:
    """What a link names, if it has a pass now, whoever asks (the link is the grant): the same
    refusals as the API's (NotPaid, NoMembershipCard, GiftCardNotIssued; NotFound for none)."""
    if kind == MEMBERSHIP:
        return membership_with_card(membership_id=owner_id)
    if kind == GIFT_CARD:
        return issued_card(card_id=owner_id)
    if kind == TICKET:
        return printable_ticket(ticket_id=owner_id)
    raise NotFound()
