"""A membership's life after its purchase, through the API and the periodic jobs: gifts redeemed
once, renewals before and after expiry with the right dates, the reminders once each, the expiry
sweep, and cancellation with a refund within the museum's rule."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from audit.models import Action, AuditRecord
from orders.models import (
    ANONYMISED_EMAIL,
    MemberEntry,
    Membership,
    MembershipSale,
    MembershipSaleKind,
    MembershipStatus,
    MembershipType,
    Refund,
)
from orders.services.membership_periods import period_end
from orders.services.memberships import expire_lapsed, send_renewal_reminders
from orders.services.personal_data import anonymise_old_memberships
from tests.conftest import assert_problem, client_for, run_task_worker
from tests.factories import UserFactory, partner_member
from tests.live_http import in_parallel, post, sign_in
from tests.orders.test_memberships_sale import MEMBERSHIPS, buy, year_from


@pytest.fixture
def individual(db):
    return MembershipType.objects.create(
        code="individual", name_en="Individual", name_fr="Individuel", price=Decimal("60.00")
    )


def at(day: dt.date):
    """Travel to noon of `day` in the museum's zone."""
    noon = timezone.make_aware(dt.datetime.combine(day, dt.time(12)))
    return time_machine.travel(noon, tick=False)


def audited(membership_id) -> list[str]:
    records = AuditRecord.objects.filter(object_type="orders.membership", object_id=membership_id)
    return list(records.order_by("at", "pk").values_list("action", flat=True))


# Gifts


def test_a_gift_is_redeemed_once_from_that_day(visitor_client, online_client, individual):
    gift = buy(visitor_client, gift=True, holderName="").json()
    assert gift["status"] == "pending" and gift["holderName"] == ""
    assert gift["giftCode"].startswith("gift-") and gift["validFrom"] is None
    # Only its buyer (and staff) read it: anyone else does not find the gift at all.
    nosy = client_for(UserFactory(username="nosy"))
    assert nosy.get(f"{MEMBERSHIPS}/{gift['membershipId']}").status_code == 404

    redeem_day = timezone.localdate() + dt.timedelta(days=5)
    with at(redeem_day):
        answer = online_client.post(
            f"{MEMBERSHIPS}/redeem",
            {"giftCode": gift["giftCode"].upper(), "holderName": "Ada", "email": "ada@example.com"},
            format="json",
        )
    assert answer.status_code == 200, answer.content
    redeemed = answer.json()
    assert redeemed["status"] == "active" and redeemed["holderName"] == "Ada"
    assert redeemed["validFrom"] == redeem_day.isoformat()
    assert redeemed["validUntil"] == year_from(redeem_day).isoformat()
    # The redeemer owns it now.
    assert online_client.get(f"{MEMBERSHIPS}/{gift['membershipId']}").status_code == 200

    again = online_client.post(
        f"{MEMBERSHIPS}/redeem",
        {"giftCode": gift["giftCode"], "holderName": "Eve", "email": "eve@example.com"},
        format="json",
    )
    assert assert_problem(again, 409)["code"] == "gift_already_redeemed"
    assert Membership.objects.get().holder_name == "Ada"
    assert audited(gift["membershipId"]) == [Action.CREATED, Action.CONFIRMED]


def test_an_unknown_or_unpaid_gift_is_not_redeemed(online_client, individual):
    unknown = online_client.post(
        f"{MEMBERSHIPS}/redeem",
        {"giftCode": "gift-aaaaaa-bbbbb", "holderName": "Ada", "email": "ada@example.com"},
        format="json",
    )
    assert assert_problem(unknown, 404)["code"] == "unknown_gift"
    unpaid = buy(online_client, gift=True).json()  # held until paid
    answer = online_client.post(
        f"{MEMBERSHIPS}/redeem",
        {"giftCode": unpaid["giftCode"], "holderName": "Ada", "email": "ada@example.com"},
        format="json",
    )
    assert assert_problem(answer, 409)["code"] == "gift_not_paid"


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_two_redemptions_at_once_one_wins(live_server, individual):
    gift = buy(client_for(partner_member(username="giver")), gift=True).json()
    for n in range(8):
        UserFactory(username=f"friend{n}")
    for n in range(8):
        sign_in(live_server.url, username=f"friend{n}")
    names = iter(range(8))

    def redeem():
        n = next(names)
        body = {"giftCode": gift["giftCode"], "holderName": f"F{n}", "email": "f@example.com"}
        return post(f"{live_server.url}{MEMBERSHIPS}/redeem", body, f"friend{n}")

    answers = in_parallel(8, redeem)
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200] + [409] * 7
    assert {p["code"] for status, p in answers if status == 409} == {"gift_already_redeemed"}
    membership = Membership.objects.get()
    assert membership.redeemed_at is not None and membership.status == MembershipStatus.ACTIVE
    assert audited(membership.pk).count(Action.CONFIRMED) == 1


# Renewal


def renewed(client, membership_id):
    answer = client.post(f"{MEMBERSHIPS}/{membership_id}/renew")
    assert answer.status_code == 201, answer.content
    return answer.json()


@pytest.mark.parametrize(
    ("days_after_end", "continues"),
    [(-20, True), (0, True), (10, True), (30, True), (31, False), (45, False)],
)
def test_a_renewal_continues_the_period_until_the_grace_period_ends(
    visitor_client, individual, days_after_end, continues
):
    sold = buy(visitor_client).json()
    end = dt.date.fromisoformat(sold["validUntil"])
    renewal_day = end + dt.timedelta(days=days_after_end)
    with at(renewal_day):
        if days_after_end > 0:
            read = visitor_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
            assert read["status"] == "expired"  # lapsed, whether or not the sweep ran
        order = renewed(visitor_client, sold["membershipId"])
        now = visitor_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
    start = end + dt.timedelta(days=1) if continues else renewal_day
    assert order["ticketType"] == "membership" and order["status"] == "confirmed"
    assert order["ticketDate"] == start.isoformat()
    assert now["status"] == "active"
    assert now["validUntil"] == year_from(start).isoformat()
    assert now["validFrom"] == (sold["validFrom"] if continues else start.isoformat())
    sale = MembershipSale.objects.get(kind=MembershipSaleKind.RENEWAL)
    assert (sale.valid_from, sale.valid_until) == (start, year_from(start))
    assert audited(sold["membershipId"])[-1] == Action.CHANGED


def test_only_an_active_or_expired_membership_of_ones_own_is_renewed(
    visitor_client, online_client, staff, individual
):
    pending = buy(online_client).json()
    problem = assert_problem(
        online_client.post(f"{MEMBERSHIPS}/{pending['membershipId']}/renew"), 409
    )
    assert problem["code"] == "membership_not_renewable"
    active = buy(visitor_client).json()
    assert_problem(online_client.post(f"{MEMBERSHIPS}/{active['membershipId']}/renew"), 404)
    # Staff renew for the member, at the desk.
    order = renewed(client_for(staff), active["membershipId"])
    assert order["status"] == "held"  # a desk sale waits for its payment


# Reminders and expiry


@pytest.mark.django_db(transaction=True)
def test_the_reminders_go_once_each_in_the_members_language(visitor_client, individual, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    sold = buy(visitor_client, language="fr").json()
    run_task_worker()
    mail.outbox.clear()
    end = dt.date.fromisoformat(sold["validUntil"])
    for days_before in (31, 30, 29, 8, 7, 6):
        with at(end - dt.timedelta(days=days_before)):
            send_renewal_reminders()
            send_renewal_reminders()  # a second worker, or the next hour's run
            run_task_worker()
    assert len(mail.outbox) == 2
    for message in mail.outbox:
        assert message.to == ["ada@example.com"]
        assert f"/v1.1/memberships/{sold['membershipId']}/renew" in message.body
        assert "Individuel" in message.body
    membership = Membership.objects.get()
    assert membership.reminded_30_at and membership.reminded_7_at
    # Renewed: the next period gets its own reminders.
    renewed(visitor_client, sold["membershipId"])
    membership.refresh_from_db()
    assert membership.reminded_30_at is None and membership.reminded_7_at is None


def test_a_membership_bought_late_gets_only_the_later_reminder(visitor_client, individual):
    sold = buy(visitor_client).json()
    end = dt.date.fromisoformat(sold["validUntil"])
    with at(end - dt.timedelta(days=5)):
        assert send_renewal_reminders() == 1
        assert send_renewal_reminders() == 0
    membership = Membership.objects.get()
    assert membership.reminded_30_at is None and membership.reminded_7_at is not None


def test_the_sweep_marks_lapsed_memberships_expired_once(visitor_client, individual):
    sold = buy(visitor_client).json()
    end = dt.date.fromisoformat(sold["validUntil"])
    with at(end):
        assert expire_lapsed() == 0  # its last day
    with at(end + dt.timedelta(days=1)):
        assert expire_lapsed() == 1
        assert expire_lapsed() == 0
        listed = visitor_client.get(MEMBERSHIPS, {"status": "expired"}).json()
    assert [m["membershipId"] for m in listed] == [sold["membershipId"]]
    assert Membership.objects.get().status == MembershipStatus.EXPIRED
    assert audited(sold["membershipId"])[-1] == Action.EXPIRED


# Cancellation


def test_cancelling_the_order_cancels_the_membership_and_pays_it_back(visitor_client, individual):
    sold = buy(visitor_client).json()
    answer = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "cancelled" and answer.json()["refundDue"] == 60
    refund = Refund.objects.get()
    assert refund.membership_sale == MembershipSale.objects.get() and refund.amount == 60
    membership = visitor_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
    assert membership["status"] == "cancelled"
    assert audited(sold["membershipId"])[-1] == Action.CANCELLED
    again = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    assert assert_problem(again, 409)["code"] == "cancelled"


def test_the_buyer_cancels_until_the_period_starts_or_the_cooling_off_ends(
    visitor_client, staff, individual
):
    today = timezone.localdate()
    late_start = buy(visitor_client, startDate=(today + dt.timedelta(days=60)).isoformat()).json()
    started = buy(visitor_client).json()
    with at(today + dt.timedelta(days=15)):
        # Past the 14 days, but before its start.
        ok = visitor_client.post(f"/v1.1/orders/{late_start['orderId']}/cancel")
        assert ok.status_code == 200
        late = visitor_client.post(f"/v1.1/orders/{started['orderId']}/cancel")
        assert assert_problem(late, 409)["code"] == "too_late"
        # Staff who may cancel any order, always.
        assert (
            client_for(staff).post(f"/v1.1/orders/{started['orderId']}/cancel").status_code == 200
        )
    assert Membership.objects.filter(status=MembershipStatus.CANCELLED).count() == 2


def test_a_membership_used_for_a_visit_is_cancelled_only_by_staff(
    visitor_client, staff, individual
):
    sold = buy(visitor_client).json()
    MemberEntry.objects.create(
        membership_id=sold["membershipId"], date=timezone.localdate(), people=1
    )
    refused = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    assert assert_problem(refused, 409)["code"] == "membership_used"
    assert Membership.objects.get().status == MembershipStatus.ACTIVE
    assert client_for(staff).post(f"/v1.1/orders/{sold['orderId']}/cancel").status_code == 200
    assert Refund.objects.get().amount == 60


def test_cancelling_a_renewal_gives_back_its_period_only(visitor_client, individual):
    sold = buy(visitor_client).json()
    order = renewed(visitor_client, sold["membershipId"])
    longer = visitor_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
    assert longer["validUntil"] > sold["validUntil"]
    assert visitor_client.post(f"/v1.1/orders/{order['orderId']}/cancel").status_code == 200
    back = visitor_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}").json()
    assert back["status"] == "active"
    assert (back["validFrom"], back["validUntil"]) == (sold["validFrom"], sold["validUntil"])
    assert Refund.objects.get().membership_sale.kind == MembershipSaleKind.RENEWAL


def test_a_held_membership_order_cancelled_refunds_nothing(online_client, individual):
    sold = buy(online_client).json()
    answer = online_client.post(f"/v1.1/orders/{sold['orderId']}/cancel")
    assert answer.status_code == 200 and answer.json()["refundDue"] == 0
    assert not Refund.objects.exists()
    assert Membership.objects.get().status == MembershipStatus.CANCELLED


@pytest.mark.parametrize(
    ("start", "months", "end"),
    [
        (dt.date(2026, 3, 1), 12, dt.date(2027, 2, 28)),
        (dt.date(2027, 3, 1), 12, dt.date(2028, 2, 29)),
        (dt.date(2026, 1, 31), 1, dt.date(2026, 2, 27)),
        (dt.date(2026, 11, 15), 3, dt.date(2027, 2, 14)),
    ],
)
def test_a_period_ends_the_day_before_the_same_day_months_later(start, months, end):
    assert period_end(start, months) == end


# Personal data


def test_the_holders_name_and_email_go_once_the_membership_ended_long_enough(
    visitor_client, individual, settings
):
    settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS = 30
    kept = buy(visitor_client).json()
    ended = buy(visitor_client, holderName="Grace", email="grace@example.com").json()
    visitor_client.post(f"/v1.1/orders/{ended['orderId']}/cancel")
    end = dt.date.fromisoformat(kept["validUntil"])
    with at(timezone.localdate() + dt.timedelta(days=30)):
        assert anonymise_old_memberships() == 0  # cancelled 30 days ago: kept
    with at(timezone.localdate() + dt.timedelta(days=31)):
        assert anonymise_old_memberships() == 1
    grace = Membership.objects.get(pk=ended["membershipId"])
    assert (grace.holder_name, grace.email) == ("anonymised", ANONYMISED_EMAIL)
    with at(end + dt.timedelta(days=30)):
        assert anonymise_old_memberships() == 0  # lapsed 29 days ago
    with at(end + dt.timedelta(days=31)):
        assert anonymise_old_memberships() == 1
        assert anonymise_old_memberships() == 0
    assert Membership.objects.get(pk=kept["membershipId"]).email == ANONYMISED_EMAIL


@pytest.mark.django_db(transaction=True)
def test_the_giver_is_mailed_the_code_and_the_holder_the_membership(
    visitor_client, online_client, individual, settings
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    gift = buy(visitor_client, gift=True, email="giver@example.com").json()
    run_task_worker()
    [to_giver] = mail.outbox
    assert to_giver.to == ["giver@example.com"] and gift["giftCode"] in to_giver.body
    mail.outbox.clear()
    online_client.post(
        f"{MEMBERSHIPS}/redeem",
        {"giftCode": gift["giftCode"], "holderName": "Ada", "email": "ada@example.com"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="fr",
    )
    run_task_worker()
    [to_holder] = mail.outbox
    assert to_holder.to == ["ada@example.com"] and gift["cardCode"] in to_holder.body
    assert Membership.objects.get().language == "fr"
