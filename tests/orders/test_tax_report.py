"""Sales by tax rate per day and per month, net of refunds: the lines sold dated by when their
order was confirmed, the refunds of lines by when they were recorded, in the museum's zone; the
report equal to the sum of the orders' lines, to the refunds of lines, and to the money the
payments took less what went back, to the cent, with prices gross or net; the page and its CSV
showing the same, to staff allowed to see the sales only."""

import datetime as dt
from collections import defaultdict
from decimal import Decimal

import pytest
import time_machine
from django.db.models import F, Q, Sum
from django.test import Client
from django.utils import timezone

from orders.models import (
    Donation,
    Fund,
    MembershipSale,
    MembershipType,
    Payment,
    PaymentState,
    Refund,
    Ticket,
    VisitorCategory,
)
from orders.selectors import TaxAmounts, TaxLine, tax_report
from orders.services.taxes import split_gross, taxed
from tests.conftest import client_for
from tests.factories import MuseumDayFactory, SpecialEventFactory, UserFactory, partner_member
from tests.orders.conftest import order_body
from tests.orders.test_sales_report import Tables, csv_tables

TAXES = "/admin/orders/order/sales/taxes/"
ORDERS = "/v1.1/orders"
ZONE = "Europe/Amsterdam"
VISIT = dt.date(2031, 2, 20)
# When things happen, in the museum's zone (Amsterdam: UTC+1 in winter).
FIRST_DAY = dt.datetime(2031, 1, 30, 10, tzinfo=dt.UTC)
# 23:30 on 31 January in UTC is half past midnight on 1 February in Amsterdam.
AFTER_MIDNIGHT = dt.datetime(2031, 1, 31, 23, 30, tzinfo=dt.UTC)
THIRD_DAY = dt.datetime(2031, 2, 2, 10, tzinfo=dt.UTC)


def at(moment: dt.datetime):
    # The clock ticks: a ticket cancelled while its order is held is cancelled before the
    # order is confirmed, as it would be.
    return time_machine.travel(moment)


def pay_with_demo(client, order_id: str) -> None:
    started = client.post(f"{ORDERS}/{order_id}/payments", {"provider": "demo"}, format="json")
    assert started.status_code == 201, started.content
    assert Client().post(started.json()["payUrl"], {"outcome": "pay"}).status_code == 302


def placed(client, *lines, **extra) -> dict:
    answer = client.post(ORDERS, order_body(VISIT, *lines, **extra), format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def ticket_of(order: dict, category: str) -> str:
    return next(t["ticketId"] for t in order["tickets"] if t["category"] == category)


@pytest.fixture(params=[True, False], ids=["prices-gross", "prices-net"])
def include_tax(request, settings):
    settings.MUSEUM_PRICES_INCLUDE_TAX = request.param
    return request.param


@pytest.fixture
def sales(settings, staff_client):
    """Three days of sales at four rates (adult 9 %, child 21 %, an event at 21 %, a membership
    type and donations at 0 %): paid online through the demo provider, in cash at the desk, on
    a partner's account and free of a payment; a child's ticket and an event ticket cancelled
    and refunded, a donation refunded by staff, a ticket cancelled while its order was held (its
    payment's surplus paid back), and a payment paid back whole (it came after its order was
    cancelled)."""
    settings.TIME_ZONE = ZONE
    for code, rate in (("adult", "9"), ("child", "21")):
        VisitorCategory.objects.filter(category=code).update(tax_rate=Decimal(rate))
    MuseumDayFactory(date=VISIT)
    event = SpecialEventFactory(
        name="Night tour", price=Decimal("20"), tax_rate=Decimal("21"), dates=[VISIT]
    )
    MembershipType.objects.create(
        code="individual", name="Individual", price=Decimal("60"), tax_rate=Decimal("0")
    )
    online = client_for(UserFactory(username="online"))
    partner = client_for(partner_member(username="hotel-adler"))

    with at(FIRST_DAY):
        family = placed(online, ("adult", 2), ("child", 1))
        pay_with_demo(online, family["orderId"])
        tour = placed(partner, ("adult", 2), ticketType="event", eventId=str(event.pk))
    with at(AFTER_MIDNIGHT):
        cash = placed(online, ("adult", 1), ("child", 1))
        paid = staff_client.post(
            f"{ORDERS}/{cash['orderId']}/payments",
            {"provider": "desk", "method": "cash"},
            format="json",
        )
        assert paid.status_code == 201, paid.content
    with at(THIRD_DAY):
        refund = online.post(
            f"{ORDERS}/{family['orderId']}/tickets/{ticket_of(family, 'child')}/cancel"
        )
        assert refund.status_code == 200, refund.content
        one = tour["tickets"][0]["ticketId"]
        assert partner.post(f"{ORDERS}/{tour['orderId']}/tickets/{one}/cancel").status_code == 200
        member = partner.post(
            "/v1.1/memberships",
            {"membershipType": "individual", "holderName": "Ada", "email": "ada@example.com"},
            format="json",
        )
        assert member.status_code == 201, member.content
        # Donations at 0 %, on the partner's account: one kept, one refunded by staff.
        fund = Fund.objects.create(name="Acquisitions")
        for amount in (10, 5):
            gift = partner.post(
                "/v1.1/donations",
                {"donations": [{"fund": fund.pk, "amount": amount}], "email": "g@example.com"},
                format="json",
            )
            assert gift.status_code == 201, gift.content
        given = gift.json()
        back = f"{ORDERS}/{given['orderId']}/donations/{given['donations'][0]['donationId']}/refund"
        assert staff_client.post(back).status_code == 200
        # A ticket cancelled while its order is held: the payment started for both is paid,
        # and the surplus goes back; the ticket was never sold.
        held = placed(online, ("adult", 1), ("child", 1))
        started = online.post(
            f"{ORDERS}/{held['orderId']}/payments", {"provider": "demo"}, format="json"
        ).json()
        child = ticket_of(held, "child")
        assert online.post(f"{ORDERS}/{held['orderId']}/tickets/{child}/cancel").status_code == 200
        assert Client().post(started["payUrl"], {"outcome": "pay"}).status_code == 302
        # Paid after its order was cancelled: paid back whole, no sale.
        late = placed(online, ("adult", 1))
        started = online.post(
            f"{ORDERS}/{late['orderId']}/payments", {"provider": "demo"}, format="json"
        ).json()
        assert online.post(f"{ORDERS}/{late['orderId']}/cancel").status_code == 200
        assert Client().post(started["payUrl"], {"outcome": "pay"}).status_code == 302

    assert Payment.objects.filter(state=PaymentState.REFUNDED).count() == 1
    surplus = Refund.objects.filter(
        ticket=None, membership_sale=None, donation=None, payment__state="confirmed"
    )
    assert [refund.amount for refund in surplus] == [taxed(price=Decimal("7.50"), rate=21).gross]
    return {"family": family, "tour": tour, "cash": cash, "held": held, "late": late}


def local_period(moment: dt.datetime, period: str) -> dt.date:
    day = timezone.localtime(moment).date()
    return day.replace(day=1) if period == "month" else day


def lines_sold(period: str) -> dict[tuple, TaxAmounts]:
    """What the confirmed orders' lines come to per period and rate, read line by line through
    the ORM: every line of a confirmed order but those cancelled before it was confirmed."""
    sums: dict[tuple, TaxAmounts] = defaultdict(TaxAmounts)
    for model in (Ticket, MembershipSale, Donation):
        lines = model.objects.filter(order__confirmed_at__isnull=False)
        for line in lines.exclude(cancelled_at__lt=F("order__confirmed_at")).select_related(
            "order"
        ):
            key = (local_period(line.order.confirmed_at, period), line.tax_rate)
            sums[key] += TaxAmounts.of(gross=line.price, tax=line.tax)
    return sums


def lines_refunded(period: str) -> dict[tuple, TaxAmounts]:
    """The refunds of lines per period (when recorded) and rate, read one by one: each of a
    whole line, so its tax is the line's."""
    sums: dict[tuple, TaxAmounts] = defaultdict(TaxAmounts)
    refunds = Refund.objects.filter(
        Q(ticket__isnull=False) | Q(membership_sale__isnull=False) | Q(donation__isnull=False)
    )
    for refund in refunds.select_related("ticket", "membership_sale", "donation"):
        line = refund.ticket or refund.membership_sale or refund.donation
        assert refund.amount == line.price
        key = (local_period(refund.created_at, period), line.tax_rate)
        sums[key] += TaxAmounts.of(gross=refund.amount, tax=line.tax)
    return sums


def total(queryset) -> Decimal:
    return queryset.aggregate(total=Sum("amount", default=Decimal("0")))["total"]


@pytest.mark.parametrize("period", ["day", "month"])
def test_the_report_is_the_orders_lines_less_their_refunds_and_the_payments_less_refunds(
    include_tax, sales, period
):
    report = tax_report(first=FIRST_DAY.date(), last=THIRD_DAY.date(), period=period)

    sold, refunded = lines_sold(period), lines_refunded(period)
    assert {(line.period, line.rate): line.sold for line in report.lines if line.sold.gross} == sold
    assert {
        (line.period, line.rate): line.refunded for line in report.lines if line.refunded.gross
    } == refunded
    assert report.total.sold == sum(sold.values(), TaxAmounts())
    assert report.total.refunded == sum(refunded.values(), TaxAmounts())
    by_rate = report.by_rate
    assert report.total.sold == sum((line.sold for line in by_rate), TaxAmounts())
    assert report.total.refunded == sum((line.refunded for line in by_rate), TaxAmounts())
    # The money: what the payments took (those paid back whole too), less all that went back;
    # as the accountant says it, confirmed payments less the surplus of a held order's payment
    # and less the refunds of lines.
    taken = total(Payment.objects.filter(state__in=["confirmed", "refunded"]))
    assert report.total.after_refunds.gross == taken - total(Refund.objects.all())
    confirmed = Payment.objects.filter(state="confirmed")
    surplus = Refund.objects.filter(
        payment__in=confirmed, ticket=None, membership_sale=None, donation=None
    )
    lines_back = Refund.objects.exclude(ticket=None, membership_sale=None, donation=None)
    assert report.total.after_refunds.gross == total(confirmed) - total(surplus) - total(lines_back)
    after = report.total.after_refunds
    assert after.net + after.tax == after.gross


def test_each_sale_is_dated_in_the_museums_zone_by_day_and_by_month(sales):
    days = tax_report(first=FIRST_DAY.date(), last=THIRD_DAY.date(), period="day")
    months = tax_report(first=dt.date(2031, 1, 15), last=dt.date(2031, 2, 10), period="month")

    # The desk's cash sale at 23:30 UTC on 31 January is Amsterdam's 1 February.
    assert sorted({line.period for line in days.lines}) == [
        dt.date(2031, 1, 30),
        dt.date(2031, 2, 1),
        dt.date(2031, 2, 2),
    ]
    assert (months.first, months.last) == (dt.date(2031, 1, 1), dt.date(2031, 2, 28))
    assert [(line.period, line.rate) for line in months.lines] == [
        (dt.date(2031, 1, 1), Decimal("9")),
        (dt.date(2031, 1, 1), Decimal("21")),
        (dt.date(2031, 2, 1), Decimal("0")),
        (dt.date(2031, 2, 1), Decimal("9")),
        (dt.date(2031, 2, 1), Decimal("21")),
    ]
    assert months.by_rate == [
        TaxLine(None, Decimal("0"), money("75.00", "0.00"), money("5.00", "0.00")),
        TaxLine(None, Decimal("9"), money("60.00", "4.96"), TaxAmounts()),
        TaxLine(None, Decimal("21"), money("55.00", "9.54"), money("27.50", "4.77")),
    ]
    assert months.total == days.total


def money(gross: str, tax: str) -> TaxAmounts:
    return TaxAmounts.of(gross=Decimal(gross), tax=Decimal(tax))


def test_the_report_is_summed_in_two_statements(sales, django_assert_num_queries):
    with django_assert_num_queries(2):
        report = tax_report(first=FIRST_DAY.date(), last=THIRD_DAY.date(), period="day")
    assert len(report.lines) == 7


@pytest.mark.parametrize("include_tax", [True, False])
def test_a_refund_of_part_of_a_line_is_split_at_its_rate(settings, include_tax):
    """A refund of less than its line (its payment had less left) is an amount paid, tax
    included, whatever the catalogue's prices are: split at the line's rate, each such refund
    on its own, never its sum."""
    settings.MUSEUM_PRICES_INCLUDE_TAX = include_tax
    VisitorCategory.objects.filter(category="adult").update(tax_rate=Decimal("9"))
    MuseumDayFactory(date=VISIT)
    partner = client_for(partner_member(username="hotel-adler"))
    with at(FIRST_DAY):
        order = placed(partner, ("adult", 3))
        for ticket in order["tickets"]:
            assert partner.post(f"{ORDERS}/{order['orderId']}/tickets/{ticket['ticketId']}/cancel")
    # Two of them paid back in part, as a payment with less left than their price leaves them.
    whole, *parts = Refund.objects.select_related("ticket").order_by("pk")
    Refund.objects.filter(pk__in=[part.pk for part in parts]).update(amount=Decimal("1.09"))

    report = tax_report(first=FIRST_DAY.date(), last=FIRST_DAY.date())

    part = split_gross(gross=Decimal("1.09"), rate=Decimal("9"))
    assert (part.net, part.tax) == (Decimal("1.00"), Decimal("0.09"))
    assert report.total.refunded == TaxAmounts.of(
        gross=whole.amount + 2 * part.gross, tax=whole.ticket.tax + 2 * part.tax
    )


def amounts(part: str) -> list[str]:
    return [f"{part}: {name} (EUR)" for name in ("net", "tax", "gross")]


HEADER = [*amounts("Sold"), *amounts("Refunded"), *amounts("After refunds")]


def test_the_page_and_its_csv_show_the_months_to_the_cent(sales, desk_client):
    asked = {"first": "2031-01-15", "last": "2031-02-10", "period": "month"}

    page = desk_client.get(TAXES, asked).content.decode()
    exported = desk_client.get(TAXES, {**asked, "format": "csv"})

    per_month, per_rate = Tables(page).tables
    assert csv_tables(exported.content.decode()) == [per_month, per_rate]
    assert exported["Content-Disposition"].endswith(
        'filename="sales-by-tax-rate-month-2031-01-01-2031-02-28.csv"'
    )
    assert exported.content.decode().startswith(
        "Orders confirmed and refunds recorded from 2031-01-01 to 2031-02-28\r\n"
    )
    # The range shown is the months' whole, and the switch says per month.
    assert 'name="first" value="2031-01-01"' in page and 'name="last" value="2031-02-28"' in page
    assert 'value="month" id="id_period_1" checked' in page
    nothing = ["0.00", "0.00", "0.00"]
    assert per_month == [
        ["Month", "Tax rate (%)", *HEADER],
        ["2031-01", "9.00", "27.52", "2.48", "30.00", *nothing, "27.52", "2.48", "30.00"],
        ["2031-01", "21.00", "39.26", "8.24", "47.50", *nothing, "39.26", "8.24", "47.50"],
        ["2031-02", "0.00", "75.00", "0.00", "75.00", "5.00", "0.00", "5.00"]
        + ["70.00", "0.00", "70.00"],
        ["2031-02", "9.00", "27.52", "2.48", "30.00", *nothing, "27.52", "2.48", "30.00"],
        ["2031-02", "21.00", "6.20", "1.30", "7.50", "22.73", "4.77", "27.50"]
        + ["-16.53", "-3.47", "-20.00"],
        ["Total", "", "175.50", "14.50", "190.00", "27.73", "4.77", "32.50"]
        + ["147.77", "9.73", "157.50"],
    ]
    assert per_rate == [
        ["Tax rate (%)", *HEADER],
        ["0.00", "75.00", "0.00", "75.00", "5.00", "0.00", "5.00", "70.00", "0.00", "70.00"],
        ["9.00", "55.04", "4.96", "60.00", *nothing, "55.04", "4.96", "60.00"],
        ["21.00", "45.46", "9.54", "55.00", "22.73", "4.77", "27.50", "22.73", "4.77", "27.50"],
        ["Total", "175.50", "14.50", "190.00", "27.73", "4.77", "32.50"]
        + ["147.77", "9.73", "157.50"],
    ]


def test_the_page_by_day_defaults_to_this_month_so_far(desk_client):
    today = timezone.localdate()

    by_day = desk_client.get(TAXES).content.decode()
    by_month = desk_client.get(TAXES, {"period": "month"}).content.decode()

    assert f'name="first" value="{today.replace(day=1)}"' in by_day
    assert f'name="last" value="{today}"' in by_day
    assert 'value="day" id="id_period_0" checked' in by_day
    assert "Nothing in this range." in by_day
    assert f'name="first" value="{today.replace(month=1, day=1)}"' in by_month


def test_the_sales_list_links_the_report(desk_client):
    assert TAXES in desk_client.get("/admin/orders/order/").content.decode()


def test_only_staff_who_may_see_the_orders_see_the_report(bare_staff):
    signed_in = Client()
    signed_in.force_login(bare_staff)

    assert Client().get(TAXES).status_code == 302  # to the admin's login
    assert signed_in.get(TAXES).status_code == 403
    assert signed_in.get(TAXES, {"format": "csv"}).status_code == 403
