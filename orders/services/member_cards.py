"""A member's card: which membership a card's token names, and a lost card replaced.

A card's token (orders.tokens, `MM1.`) names the membership and is signed with the museum's key
and the membership's card secret, empty until a card is replaced. Replacing it (reissue_card)
gives the membership a new card code and secret, so the old card's token no longer verifies
and its code names nothing; both are kept (ReplacedCard), so that the door says the card was
replaced rather than forged or unknown.
"""

import secrets

from django.db import transaction

from audit.models import Action
from audit.services import record
from orders import tokens
from orders.codes import new_confirmation_code
from orders.models import Membership, MembershipCard, ReplacedCard
from orders.selectors import refuse_unless_card_printable


def reissue_card(*, membership: Membership, by) -> Membership:
    """Replace the membership's card (lost, stolen): a new card code and card secret, the old
    ones kept as replaced, the kept card deleted (drawn again, with the new code, when next
    asked for). Only a membership with a card (NoMembershipCard: not pending nor cancelled).
    Audited with who replaced it."""
    with transaction.atomic():
        locked = (
            Membership.objects.select_for_update(of=("self",))
            .select_related("membership_type")
            .get(pk=membership.pk)
        )
        refuse_unless_card_printable(locked)
        old_code = locked.card_code
        ReplacedCard.objects.create(
            membership=locked, card_code=old_code, card_secret=locked.card_secret, replaced_by=by
        )
        locked.card_code = new_confirmation_code("member")
        locked.card_secret = secrets.token_urlsafe(32)
        locked.save(update_fields=["card_code", "card_secret"])
        MembershipCard.objects.filter(membership=locked).delete()
        record(
            action=Action.CHANGED,
            obj=locked,
            by=by,
            changes={"card_code": [old_code, locked.card_code], "card": "replaced"},
        )
    return locked


def membership_of_token(token: str) -> tuple[Membership | None, bool]:
    """The membership a card's token names, and whether the card was replaced since (its token
    verifies with a replaced card's secret only); None if it names no membership (gone).
    InvalidTicketToken for a token this museum did not sign for any of its cards."""
    membership_id = tokens.member_card_claim(token)
    found = Membership.objects.select_related("membership_type").filter(pk=membership_id).first()
    if found is None:
        tokens.verify_member_card_token(token)  # forged, or of a membership that is gone
        return None, False
    try:
        tokens.verify_member_card_token(token, secret=found.card_secret)
        return found, False
    except tokens.InvalidTicketToken:
        for secret in found.replaced_cards.values_list("card_secret", flat=True):
            try:
                tokens.verify_member_card_token(token, secret=secret)
            except tokens.InvalidTicketToken:
                continue
            return found, True
        raise


def replaced_card(card_code: str) -> Membership | None:
    """The membership whose replaced card had this code, if any."""
    replaced = (
        ReplacedCard.objects.select_related("membership__membership_type")
        .filter(card_code=card_code)
        .first()
    )
    return replaced.membership if replaced is not None else None
