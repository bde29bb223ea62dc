"""On account: a sales partner collects the money and is invoiced monthly; a refund is a credit
on the invoice."""

from orders.models import Refund, RefundState
from orders.providers.base import Provider

ON_ACCOUNT = "on_account"
SELL_ON_ACCOUNT = "orders.sell_on_account"


class OnAccountProvider(Provider):
    name = ON_ACCOUNT
    settles_locally = True

    def offered_to(self, account) -> bool:
        return False  # a partner's order is paid on account when it is confirmed

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        return RefundState.DONE, ""
