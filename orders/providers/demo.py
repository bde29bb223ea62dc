"""The demo provider, for local work only: a page with "Pay" and "Decline" completes the payment
(orders.providers.views.demo_payment), as a bank's page would."""

from django.conf import settings
from django.urls import reverse

from orders.models import Payment, Refund, RefundState
from orders.providers.base import Provider, Started

DEMO = "demo"


class DemoProvider(Provider):
    name = DEMO
    settles_locally = True

    def offered_to(self, account) -> bool:
        return settings.MUSEUM_DEMO_PAYMENTS

    def start(self, payment: Payment) -> Started:
        return Started(pay_url=reverse("demo-payment", kwargs={"payment_id": payment.pk}))

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        return RefundState.DONE, ""
