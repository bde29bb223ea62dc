"""An order's copy of the buyer's email and phone goes after the retention period, as its
tickets' does (tests/orders/test_contact_data.py)."""

import datetime as dt
from io import StringIO

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.utils import timezone

from orders.models import ANONYMISED_EMAIL, Order
from orders.services.personal_data import anonymise_old_orders
from orders.services.sale import place_order
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, UserFactory, partner_member
from tests.orders.conftest import later

BUYER = "ada.lovelace@example.com"


@pytest.fixture
def retention(settings):
    settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS = 30
    return 30


def family_order(*, day: dt.date, buyer=None) -> Order:
    MuseumDayFactory(date=day)
    return place_order(
        buyer=buyer or UserFactory(),
        email=BUYER,
        phone="+44 20 7946 0000",
        ticket_type="general",
        ticket_date=day,
        lines=[{"category": "adult", "quantity": 2}, {"category": "child", "quantity": 1}],
    )


def anonymise() -> str:
    out = StringIO()
    call_command("anonymise_tickets", stdout=out)
    return out.getvalue()


def test_orders_past_the_retention_period_lose_email_and_phone(db, retention):
    buyer = partner_member()
    old = family_order(day=later(3), buyer=buyer)
    kept = family_order(day=later(4), buyer=buyer)
    record = ["buyer_id", "status", "total", "date", "confirmation_code", "confirmed_at"]
    before = Order.objects.values(*record).get(pk=old.pk)

    # The day after the retention period of the first order's date, the last of the second's.
    with time_machine.travel(timezone.now() + dt.timedelta(days=3 + retention + 1)):
        assert anonymise().splitlines() == [
            "1 orders anonymised (more than 30 days past their date).",
        ]
        # Idempotent: a second run finds nothing left to do.
        assert anonymise().splitlines()[0].startswith("0 orders anonymised")

    old.refresh_from_db()
    assert (old.email, old.phone) == (ANONYMISED_EMAIL, "")
    assert Order.objects.values(*record).get(pk=old.pk) == before  # the record of the sale stays
    kept.refresh_from_db()
    assert (kept.email, kept.phone) == (BUYER, "+44 20 7946 0000")


def test_many_orders_are_anonymised_a_batch_at_a_time(db, retention, django_assert_max_num_queries):
    for offset in range(5):
        family_order(day=later(3 + offset))

    with time_machine.travel(timezone.now() + dt.timedelta(days=60)):
        # Per batch of two: its keys, its UPDATE, its orders' audit records read and rewritten
        # (and the test's savepoint and release); then the empty look that ends it.
        with django_assert_max_num_queries(3 * 6 + 1):
            assert anonymise_old_orders(batch_size=2) == 5

    assert set(Order.objects.values_list("email", "phone")) == {(ANONYMISED_EMAIL, "")}


@pytest.mark.django_db(transaction=True)  # the task worker commits
def test_an_order_email_still_unsent_when_its_address_goes_is_never_sent(retention):
    order = family_order(day=later(3))

    with time_machine.travel(timezone.now() + dt.timedelta(days=40)):
        assert anonymise_old_orders() == 1
        run_task_worker()

    assert mail.outbox == []
    order.refresh_from_db()
    assert order.confirmation_sent_at is None
