"""A membership bought online with Stripe (localstripe, tests/stripe_fake.py): pending until
Stripe's webhook confirms the payment, then active and mailed; cancelled within the cooling-off
period, paid back through Stripe."""

from decimal import Decimal

import pytest
from django.core import mail
from django.utils import timezone

from orders.models import Membership, MembershipStatus, MembershipType, Refund
from tests.conftest import run_task_worker
from tests.orders.test_memberships_sale import MEMBERSHIPS, buy
from tests.orders.test_stripe_payments import (
    expire,
    payment_state,
    start_stripe_payment,
    stripe_on,  # noqa: F401 (the fixture)
    stripe_refunds,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def individual(db):
    return MembershipType.objects.create(
        code="individual", name_en="Individual", name_fr="Individuel", price=Decimal("60.00")
    )


def test_a_membership_paid_with_stripe_activates_only_when_paid(
    stripe_on,  # noqa: F811
    online_client,
    individual,
):
    sold = buy(online_client, language="fr").json()
    assert sold["status"] == "pending" and sold["order"]["status"] == "held"
    # Not paid: a bare confirmation is refused, and nothing is mailed.
    assert online_client.post(f"/v1.1/orders/{sold['orderId']}/confirm").status_code == 402
    run_task_worker()
    assert mail.outbox == []

    payment = start_stripe_payment(online_client, sold["orderId"])
    assert online_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()["status"] == "pending"
    stripe_on.pay(payment.reference)
    assert payment_state(payment, "confirmed") == "confirmed"

    active = online_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
    assert active["status"] == "active" and active["validFrom"] == timezone.localdate().isoformat()
    run_task_worker()
    [email] = mail.outbox
    assert email.to == ["ada@example.com"]
    assert active["cardCode"] in email.body and "Individuel" in email.body

    cancelled = online_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["refundDue"] == 60
    run_task_worker()
    assert stripe_refunds(stripe_on, payment) == [6000]
    assert Refund.objects.get().membership_sale.membership_id.hex == sold["membershipId"].replace(
        "-", ""
    )
    assert Membership.objects.get().status == MembershipStatus.CANCELLED


def test_a_payment_after_the_hold_ran_out_still_activates_the_membership(
    stripe_on,  # noqa: F811
    online_client,
    individual,
):
    """A membership takes no places: a late payment always finds its order's room."""
    sold = buy(online_client).json()
    payment = start_stripe_payment(online_client, sold["orderId"])
    expire(sold["orderId"])
    assert online_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()["status"] == "pending"

    stripe_on.pay(payment.reference)

    assert payment_state(payment, "confirmed", "refunded") == "confirmed"
    active = online_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
    assert active["status"] == "active" and active["validFrom"] == timezone.localdate().isoformat()
