"""The "Add to Apple Wallet" and "Add to Google Wallet" links of the emails the sale sends (an
order's tickets, a membership's card; the giftcards app's cards too).

The wallet app makes them, and it sits above the sale (docs/architecture.md): it registers the
function that does from its AppConfig.ready, as the apps above register their emails
(orders.notifications.register_email). Without it, or without a wallet set up, an email has no
links, and says nothing of wallets.
"""

from collections.abc import Callable
from typing import Any

# A link as an email shows it: its words, in the active language, and its address.
Link = tuple[str, str]
LinksMaker = Callable[..., list[Link]]

LINKS: list[LinksMaker] = []


def register_wallet_links(make: LinksMaker) -> None:
    """`make(ticket=..., membership=..., gift_card=...)`, one of them given, answers its links."""
    if make not in LINKS:
        LINKS.append(make)


def links_for(*, ticket: Any = None, membership: Any = None, gift_card: Any = None) -> list[Link]:
    """The wallet links of a ticket, a membership's card or a gift card (one of them), in the
    active language: none while no wallet is set up. The caller asks whether it may be shown (a
    valid ticket of a paid order, an active membership, an issued card)."""
    return [
        link
        for make in LINKS
        for link in make(ticket=ticket, membership=membership, gift_card=gift_card)
    ]
