"""The `giftcard` payment provider: a gift card pays what it holds of an order, at once, and a
refund of that payment goes back onto the card. It calls nobody, so its refunds are settled in
the cancellation's own transaction (orders.refunds)."""

from decimal import Decimal

from giftcards import services
from orders.models import Payment, Refund, RefundState
from orders.providers.base import Provider, Started

GIFT_CARD = "giftcard"


class GiftCardProvider(Provider):
    name = GIFT_CARD
    settles_locally = True
    stored_value = True

    def offered_to(self, account) -> bool:
        return True  # whoever holds a code

    def prepare(self, *, order, due: Decimal, code: str) -> tuple[Decimal, str]:
        amount, card = services.spendable_amount(code=code, order=order, due=due)
        return amount, str(card.pk)

    def start(self, payment: Payment) -> Started:
        services.redeem(card_id=payment.reference, payment=payment)
        return Started(reference=payment.reference, paid=True)

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        move = services.credit_back(refund=refund)
        return RefundState.DONE, f"gift card transaction {move.pk}"
