"""Reads of gift cards: who may see one."""

import uuid

from giftcards.models import GiftCard
from museum.exceptions import NotFound

VIEW_ANY_GIFT_CARD = "giftcards.view_giftcard"


def viewable_card(*, card_id: uuid.UUID, viewer) -> GiftCard:
    """The card, for its buyer and staff who may view any; NotFound for anyone else."""
    card = GiftCard.objects.filter(pk=card_id).first()
    if card is None or not (card.buyer_id == viewer.pk or viewer.has_perm(VIEW_ANY_GIFT_CARD)):
        raise NotFound()
    return card
