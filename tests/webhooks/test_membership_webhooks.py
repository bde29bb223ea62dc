"""Every change of a membership reaching a webhook receiver on loopback (verified with
standardwebhooks), the membership as the API answers it, only to those who may see it; and its
record in the audit log."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.contrib.auth.models import Permission
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from audit.models import Action, AuditRecord
from orders.models import Membership, MembershipType
from orders.services.memberships import expire_lapsed
from tests.conftest import client_for, run_task_worker
from tests.factories import partner_member
from tests.orders.test_memberships_sale import MEMBERSHIPS, buy

pytestmark = [
    pytest.mark.django_db(transaction=True),  # on_commit and the task worker
    pytest.mark.usefixtures("receivers_allowed"),
]


@pytest.fixture
def individual(db):
    return MembershipType.objects.create(code="individual", name="Individual", price=Decimal(60))


def test_every_membership_change_reaches_the_receiver_with_its_audit_record(
    httpserver, staff, individual
):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    staff.user_permissions.add(Permission.objects.get(codename="manage_own_webhooks"))
    types = ["membership.activated", "membership.renewed", "membership.expired"]
    types.append("membership.cancelled")
    subscription = client_for(staff).post(
        "/v1.1/webhooks",
        {"url": httpserver.url_for("/hook"), "eventTypes": types},
        format="json",
    )
    assert subscription.status_code == 201, subscription.content
    secret = subscription.json()["secret"]
    partner = client_for(partner_member(username="shop"))
    other = client_for(partner_member(username="other-shop"))

    kept = buy(partner).json()  # activated
    partner.post(f"{MEMBERSHIPS}/{kept['membershipId']}/renew")  # renewed
    end = Membership.objects.get(pk=kept["membershipId"]).valid_until
    dropped = buy(other, holderName="Grace").json()  # activated
    other.post(f"/v1.1/orders/{dropped['orderId']}/cancel")  # cancelled
    with time_machine.travel(
        timezone.make_aware(dt.datetime.combine(end + dt.timedelta(days=1), dt.time(12)))
    ):
        assert expire_lapsed() == 1  # expired
    run_task_worker()  # delivered now: a receiver checks the signature's time

    bodies = [
        Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
        for request, _ in httpserver.log
    ]
    events = sorted((body["type"], body["data"]["membershipId"]) for body in bodies)
    assert events == sorted(
        [
            ("membership.activated", kept["membershipId"]),
            ("membership.renewed", kept["membershipId"]),
            ("membership.expired", kept["membershipId"]),
            ("membership.activated", dropped["membershipId"]),
            ("membership.cancelled", dropped["membershipId"]),
        ]
    )
    cancelled = next(b for b in bodies if b["type"] == "membership.cancelled")["data"]
    assert cancelled["status"] == "cancelled" and cancelled["holderName"] == "Grace"
    assert cancelled["cardUrl"].endswith(f"/v1.1/memberships/{dropped['membershipId']}/card.png")
    # Each change is in the audit log.
    actions = sorted(
        AuditRecord.objects.filter(object_type="orders.membership").values_list("action", flat=True)
    )
    assert actions == sorted(
        [Action.CREATED, Action.CONFIRMED, Action.CHANGED, Action.EXPIRED]
        + [Action.CREATED, Action.CONFIRMED, Action.CANCELLED]
    )


def test_a_partner_hears_only_of_its_own_memberships(httpserver, individual):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    partner = client_for(partner_member(username="shop"))
    subscribed = partner.post(
        "/v1.1/webhooks",
        {"url": httpserver.url_for("/hook"), "eventTypes": ["membership.activated"]},
        format="json",
    )
    assert subscribed.status_code == 201
    buy(client_for(partner_member(username="other-shop")))
    run_task_worker()
    assert httpserver.log == []
