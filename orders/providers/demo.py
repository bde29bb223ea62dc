"""The demo provider, for local work only: a page with "Pay" and "Decline" completes the payment
(orders.providers.views.demo_payment), as a bank's page would."""

from django.conf import settings
from django.urls import reverse

from orders.models import Payment, PaymentState, Refund, RefundState
from orders.providers.base import Provider, Started

DEMO = "demo"


class DemoProvider(Provider):
    name = DEMO
    settles_locally = True

    def offered_to(self, account) -> bool:
        return settings.MUSEUM_DEMO_PAYMENTS

    def start(self, payment: Payment) -> Started:
        return Started(pay_url=_page(payment))

    def pay_url(self, payment: Payment) -> str | None:
        # The page completes a pending payment only, and only while demo payments are on.
        if payment.state != PaymentState.PENDING or not settings.MUSEUM_DEMO_PAYMENTS:
            return None
        return _page(payment)

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        return RefundState.DONE, ""


def _page(payment: Payment) -> str:
    return reverse("demo-payment", kwargs={"payment_id": payment.pk})
