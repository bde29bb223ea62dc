"""The front desk: staff take cash or a card terminal's payment, money in hand when they record
it, and pay a refund back by hand."""

from orders.models import Payment, Refund, RefundState
from orders.providers.base import Provider, Started

DESK = "desk"
TAKE_DESK_PAYMENT = "orders.take_desk_payment"
# Selling at the desk (to the people in front of staff) is the desk's, whoever pays.
SELL_AT_DESK = "orders.sell_at_desk"


class DeskProvider(Provider):
    name = DESK
    settles_locally = True

    def offered_to(self, account) -> bool:
        return account.has_perm(TAKE_DESK_PAYMENT)

    def start(self, payment: Payment) -> Started:
        return Started(paid=True)

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        return RefundState.MANUAL, ""
