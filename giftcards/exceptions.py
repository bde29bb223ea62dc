"""The refusals of gift cards: each a kind and a reason."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem, NotFound


class UnknownGiftCard(NotFound):
    """No card of that code, or not one that can be spent yet: the same answer for both, so a
    lookup says nothing of codes it was not given."""

    default_code = "unknown_gift_card"
    default_detail = _("No gift card has this code.")


class InsufficientBalance(MuseumProblem):
    default_code = "insufficient_balance"
    title = _("Not enough on the gift card")
    default_detail = _("The gift card holds less than this payment takes.")


class GiftCardExpired(MuseumProblem):
    default_code = "gift_card_expired"
    title = _("Gift card expired")
    default_detail = _("The gift card has expired; ask the museum about its balance.")


class GiftCardForGiftCard(MuseumProblem):
    default_code = "gift_card_for_gift_card"
    title = _("A gift card does not buy a gift card")
    default_detail = _("Pay for a gift card another way.")


class GiftCardSpent(MuseumProblem):
    default_code = "gift_card_spent"
    title = _("Gift card spent")
    default_detail = _(
        "Some of the gift card was spent: its refunds can no longer go back another way."
    )


class GiftCardNotIssued(MuseumProblem):
    """A card whose order is not paid yet: it holds nothing, and has no code to print."""

    default_code = "gift_card_not_issued"
    title = _("Gift card not paid yet")
    default_detail = _("The gift card's order is not paid yet: its card comes once it is.")
