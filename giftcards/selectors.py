"""Reads of gift cards: who may see one, and print it."""

import uuid

from giftcards.cards import refuse_unless_issued
from giftcards.models import GiftCard
from museum.exceptions import NotFound

VIEW_ANY_GIFT_CARD = "giftcards.view_giftcard"


def viewable_card(*, card_id: uuid.UUID, viewer) -> GiftCard:
    """The card, for its buyer and staff who may view any; NotFound for anyone else."""
    card = GiftCard.objects.filter(pk=card_id).first()
    if card is None or not (card.buyer_id == viewer.pk or viewer.has_perm(VIEW_ANY_GIFT_CARD)):
        raise NotFound()
    return card


def printable_card(*, card_id: uuid.UUID, viewer) -> GiftCard:
    """The card, for its buyer and staff, once it is issued: NotFound for anyone else,
    GiftCardNotIssued while its order is not paid."""
    card = viewable_card(card_id=card_id, viewer=viewer)
    refuse_unless_issued(card)
    return card


def issued_card(*, card_id: uuid.UUID) -> GiftCard:
    """The card, whoever asks, once it is issued: for a face that was handed it by a signed link
    (the wallet's), which grants what the emailed card does. NotFound for no card,
    GiftCardNotIssued while its order is not paid."""
    card = GiftCard.objects.filter(pk=card_id).first()
    if card is None:
        raise NotFound()
    refuse_unless_issued(card)
    return card
