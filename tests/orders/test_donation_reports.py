"""Donations in the accountant's reports: per fund and month (given, refunded by staff, net),
its page and CSV; and the sales and tax reports with donations beside tickets and alone, still
reconciling to the cent with the orders' totals and with the payments less the refunds."""

from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from orders.models import Donation, Fund, Order, Payment, Refund, VisitorCategory
from orders.selectors import TaxAmounts, fund_report, sales_report, tax_report
from tests.conftest import client_for
from tests.factories import partner_member
from tests.orders.conftest import later
from tests.orders.test_donations import given, pay_with_demo, placed
from tests.orders.test_sales_report import Tables, csv_tables

FUNDS = "/admin/orders/donation/funds/"


def total(queryset, field="amount") -> Decimal:
    return queryset.aggregate(total=Sum(field, default=Decimal("0")))["total"]


@pytest.fixture
def funds(db):
    VisitorCategory.objects.update(tax_rate=Decimal("9"))
    return (
        Fund.objects.create(name="Acquisitions", minimum=Decimal("5"), ordering=1),
        Fund.objects.create(name="Education", minimum=Decimal("1"), ordering=2),
    )


@pytest.fixture
def giving(funds, online_client, staff_client, open_day):
    """Tickets with a donation beside them, paid, one ticket cancelled by the visitor; a
    donation alone, paid, refunded by staff; one on a partner's account; and one held, never
    paid."""
    acquisitions, education = funds
    beside = placed(
        online_client,
        ("adult", 2),
        donations=[
            {"fund": acquisitions.pk, "amount": 10},
            {"fund": education.pk, "amount": 2.5},
        ],
    )
    pay_with_demo(online_client, beside["orderId"])
    adult = beside["tickets"][0]["ticketId"]
    cancel = online_client.post(f"/v1.1/orders/{beside['orderId']}/tickets/{adult}/cancel")
    assert cancel.status_code == 200, cancel.content

    alone = given(online_client, acquisitions, amount=40)
    pay_with_demo(online_client, alone["orderId"])
    donation = alone["donations"][0]["donationId"]
    refunded = staff_client.post(f"/v1.1/orders/{alone['orderId']}/donations/{donation}/refund")
    assert refunded.status_code == 200, refunded.content

    partner = client_for(partner_member(username="hotel-adler"))
    on_account = given(partner, education, amount=15)
    assert on_account["status"] == "confirmed"
    held = given(online_client, acquisitions, amount=99)
    assert held["status"] == "held"
    return {"beside": beside, "alone": alone, "on_account": on_account, "held": held}


def test_the_fund_report_is_given_less_refunded_per_fund_and_month(giving, funds):
    today = timezone.localdate()
    report = fund_report(first=today, last=later())
    rows = {(line.fund, line.month): line for line in report.lines}
    month = today.replace(day=1)
    acquisitions, education = rows[("Acquisitions", month)], rows[("Education", month)]
    assert (acquisitions.donations, acquisitions.given, acquisitions.refunded) == (2, 50, 40)
    assert acquisitions.net == 10
    assert (education.donations, education.given, education.refunded) == (2, Decimal("17.5"), 0)
    # Every donation of a confirmed order, less every refund of one: the held one gave nothing.
    confirmed = Donation.objects.filter(order__confirmed_at__isnull=False)
    back = Refund.objects.filter(donation__isnull=False)
    assert report.totals["net"] == total(confirmed) - total(back) == Decimal("27.5")


def test_the_sales_report_lists_donations_and_reconciles_with_payments_less_refunds(giving):
    today, visit = timezone.localdate(), later()
    report = sales_report(first=today, last=visit)
    donations = [row for row in report.rows if row["what"] == "Donation"]
    assert {(row["date"], row["category__name"]) for row in donations} == {
        (visit, "Acquisitions"),
        (visit, "Education"),
        (today, "Acquisitions"),
        (today, "Education"),
    }
    paid = Payment.objects.filter(state="confirmed")
    refunds = Refund.objects.all()
    assert report.totals["gross"] == report.takings_totals["gross"] == total(paid)
    assert report.totals["refunds"] == report.takings_totals["refunds"] == total(refunds)
    assert report.totals["net"] == report.takings_totals["net"] == total(paid) - total(refunds)
    # And the orders' totals: every confirmed order's total is its lines'.
    confirmed = Order.objects.filter(confirmed_at__isnull=False)
    assert report.totals["gross"] == total(confirmed, "total")


@pytest.mark.parametrize("period", ["day", "month"])
def test_the_tax_report_has_donations_at_0_percent_and_reconciles(giving, period):
    today = timezone.localdate()
    report = tax_report(first=today, last=today, period=period)
    [untaxed] = [line for line in report.by_rate if line.rate == 0]
    assert untaxed.sold == TaxAmounts(Decimal("67.5"), Decimal("0"), Decimal("67.5"))
    assert untaxed.refunded == TaxAmounts(Decimal("40"), Decimal("0"), Decimal("40"))
    confirmed = Order.objects.filter(confirmed_at__isnull=False)
    assert report.total.sold.gross == total(confirmed, "total")
    paid = Payment.objects.filter(state="confirmed")
    assert report.total.after_refunds.gross == total(paid) - total(Refund.objects.all())
    after = report.total.after_refunds
    assert after.net + after.tax == after.gross


def test_the_fund_page_and_its_csv_show_the_same(giving, desk_client):
    today = timezone.localdate().isoformat()
    page = desk_client.get(FUNDS, {"first": today, "last": today})
    exported = desk_client.get(FUNDS, {"first": today, "last": today, "format": "csv"})
    assert page.status_code == 200 and exported.status_code == 200
    [table] = Tables(page.content.decode()).tables
    assert csv_tables(exported.content.decode()) == [table]
    assert table[-1] == ["Total", "", "4", "67.50", "40.00", "27.50"]


def test_staff_refund_donations_from_the_admin(giving, desk_client):
    donation = Donation.objects.get(order_id=giving["beside"]["orderId"], fund__name="Education")
    answer = desk_client.post(
        "/admin/orders/donation/",
        {"action": "refund_selected", "_selected_action": [donation.pk]},
    )
    assert answer.status_code == 302
    donation.refresh_from_db()
    assert donation.cancelled_at is not None
    assert Refund.objects.get(donation=donation).amount == Decimal("2.5")


def test_a_visitor_sees_no_fund_report(client, online_visitor):
    client.force_login(online_visitor)
    assert client.get(FUNDS).status_code == 302
