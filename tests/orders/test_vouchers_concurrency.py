"""Buyers racing for a voucher's uses, its budget and the places it keeps, against a real
PostgreSQL server through real HTTP requests: counted under the lock, never past its limits."""

import datetime as dt
import queue
from collections import Counter
from decimal import Decimal

import pytest
from django.utils import timezone

from hours.models import MuseumDay
from orders.models import Ticket, Voucher
from tests.factories import MuseumDayFactory, partner_member
from tests.live_http import in_parallel, post, sign_in

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def buyer_url(live_server, settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {  # one account buys twenty times at once
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**rates, "purchase": "1000/min"},
    }
    partner_member(username="partner")
    sign_in(live_server.url, username="partner")
    return f"{live_server.url}/v1.1/orders"


def order(day: dt.date, quantity: int = 1, voucher: str | None = None) -> dict:
    return {
        "ticketType": "general",
        "ticketDate": day.isoformat(),
        "email": "race@example.com",
        "lines": [{"category": "adult", "quantity": quantity}],
        **({"voucher": voucher} if voucher else {}),
    }


def test_twenty_buyers_racing_for_a_three_use_voucher_get_exactly_three(buyer_url):
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2), capacity=100)
    Voucher.objects.create(code="THREE", effect="free", max_uses=3)
    body = order(day.date, voucher="three")

    answers = in_parallel(20, lambda: post(buyer_url, body, "partner"))

    assert Counter(status for status, _ in answers) == {201: 3, 409: 17}
    assert {problem["reason"] for status, problem in answers if status == 409} == {
        "voucher_used_up"
    }
    assert Voucher.objects.get().uses == 3
    assert Ticket.objects.filter(voucher__code="THREE").count() == 3
    # The refused sales counted no place.
    assert MuseumDay.objects.get(pk=day.pk).sold == 3


def test_twenty_buyers_racing_for_a_budget_never_exceed_it(buyer_url):
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2), capacity=100)
    # 15.00 off an adult each: the budget has room for 4 tickets and a bit.
    Voucher.objects.create(code="FUND", effect="free", budget=Decimal("70"))
    body = order(day.date, voucher="FUND")

    answers = in_parallel(20, lambda: post(buyer_url, body, "partner"))

    assert Counter(status for status, _ in answers) == {201: 4, 409: 16}
    assert Voucher.objects.get().discount_given == Decimal("60.00")
    assert sum(t.discount for t in Ticket.objects.all()) == Decimal("60.00")


def test_the_public_racing_the_holders_leave_the_kept_places_to_them(buyer_url):
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=2), capacity=5)
    Voucher.objects.create(code="LEND", effect="free", max_uses=2, keep_day=day.date)
    bodies: queue.SimpleQueue = queue.SimpleQueue()
    for body in [order(day.date, voucher="LEND")] * 2 + [order(day.date)] * 10:
        bodies.put(body)

    answers = in_parallel(12, lambda: post(buyer_url, bodies.get(), "partner"))

    sold = Counter(
        (ticket.voucher_id is not None) for ticket in Ticket.objects.select_related("voucher")
    )
    assert sold == {True: 2, False: 3}
    assert Counter(status for status, _ in answers) == {201: 5, 409: 7}
    assert MuseumDay.objects.get(pk=day.pk).sold == 5
