"""The sales report an accountant signs: per day, visit and category, gross, cancellations,
refunds and net with totals; takings per payment method, gross, refunds and net, whose total is
the table's; the page and its CSV showing the same, and both agreeing with the database to the
cent."""

import csv
import io
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.db.models import Sum
from django.test import Client

from orders.models import Fund, Order, OrderStatus, Payment, Refund, Ticket, Voucher
from orders.services.holds import release_expired_holds
from tests.conftest import client_for, run_task_worker
from tests.factories import MuseumDayFactory, SpecialEventFactory, partner_member
from tests.orders.conftest import later, order_body
from tests.orders.test_stripe_payments import (
    held_order,
    payment_state,
    start_stripe_payment,
    stripe_on,  # noqa: F401 (the fixture)
    stripe_refunds,
)

pytestmark = pytest.mark.django_db(transaction=True)

SALES = "/admin/orders/order/sales/"


class Tables(HTMLParser):
    """The cells of each report table of a page, row by row, as text."""

    def __init__(self, html: str):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "table" and ("class", "report") in attrs:
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None


def csv_tables(text: str) -> list[list[list[str]]]:
    """The CSV's tables: the rows under each title, its header first."""
    tables: list[list[list[str]]] = []
    rows = list(csv.reader(io.StringIO(text)))
    for previous, row in zip(rows, rows[1:], strict=False):
        if previous == [] and len(row) == 1:  # a table's title, after a blank row
            tables.append([])
        elif tables and row:
            tables[-1].append(row)
    return tables


def cents(amount: str) -> int:
    """An amount as the report writes it (two decimal places: 1234.50) in cents."""
    return int(Decimal(amount) * 100)


def money(*columns: str) -> list[str]:
    """The headers of columns of money, naming the currency."""
    return [f"{column} (EUR)" for column in columns]


def db_cents(amount: Decimal | None) -> int:
    return int((amount or Decimal("0")) * 100)


@pytest.fixture
def a_day_of_sales(stripe_on, online_client, staff_client):  # noqa: F811
    """One visit day: paid through Stripe and partly cancelled; paid by card at the desk and
    refunded whole; paid in cash, with a donation; a partner's on account, partly cancelled,
    and an event's; held; and expired."""
    day = MuseumDayFactory(date=later()).date
    event = SpecialEventFactory(name="Night tour", price=Decimal("20"), dates=[day])
    orders = "/v1.1/orders"

    stripe = held_order(online_client, day, ("adult", 2), ("child", 1))
    payment = start_stripe_payment(online_client, stripe["orderId"])
    stripe_on.pay(payment.reference)
    assert payment_state(payment, "confirmed") == "confirmed"
    child = next(t for t in stripe["tickets"] if t["category"] == "child")
    online_client.post(f"{orders}/{stripe['orderId']}/tickets/{child['ticketId']}/cancel")

    card = held_order(online_client, day, ("adult", 1))
    paid = staff_client.post(
        f"{orders}/{card['orderId']}/payments",
        {"provider": "desk", "method": "card"},
        format="json",
    )
    assert paid.status_code == 201
    online_client.post(f"{orders}/{card['orderId']}/cancel")

    # Paid in cash with a donation beside its tickets.
    fund = Fund.objects.create(name="Acquisitions")
    cash = online_client.post(
        orders,
        order_body(day, ("senior", 2), donations=[{"fund": fund.pk, "amount": 6}]),
        format="json",
    ).json()
    cashed = staff_client.post(
        f"{orders}/{cash['orderId']}/payments",
        {"provider": "desk", "method": "cash"},
        format="json",
    )
    assert cashed.status_code == 201

    partner = client_for(partner_member(username="hotel-adler"))
    on_account = partner.post(
        orders, order_body(day, ("adult", 1), ("student", 1)), format="json"
    ).json()
    student = next(t for t in on_account["tickets"] if t["category"] == "student")
    partner.post(f"{orders}/{on_account['orderId']}/tickets/{student['ticketId']}/cancel")
    body = order_body(day, ("adult", 1), ticketType="event", eventId=str(event.pk))
    assert partner.post(orders, body, format="json").status_code == 201

    held = held_order(online_client, day, ("adult", 3))
    start_stripe_payment(online_client, held["orderId"])  # started, never paid
    expired = held_order(online_client, day, ("adult", 1))
    Order.objects.filter(pk=expired["orderId"]).update(hold_expires_at="2000-01-01T00:00:00Z")
    assert release_expired_holds() == 1

    run_task_worker()  # Stripe pays its refund back
    assert stripe_refunds(stripe_on, payment) == [750]
    assert Order.objects.get(pk=held["orderId"]).status == OrderStatus.HELD
    return day


def test_the_page_the_csv_and_the_database_agree_to_the_cent(a_day_of_sales, desk_client):
    day = a_day_of_sales.isoformat()

    page = desk_client.get(SALES, {"first": day, "last": day}).content.decode()
    exported = desk_client.get(SALES, {"first": day, "last": day, "format": "csv"})

    sales, takings, discounts = Tables(page).tables
    shown = [sales, takings, [row for row in discounts if row != ["Nothing in this range."]]]
    assert csv_tables(exported.content.decode()) == shown  # every part, as shown
    assert exported.content.decode().startswith(f"Visits from {day} to {day}\r\n")
    assert sales == [
        [
            "Date",
            "Visit",
            "Visitor category",
            "Sold",
            *money("Gross"),
            "Cancelled",
            *money("Refunds", "Net"),
        ],
        [day, "General entry", "Adult", "4", "60.00", "1", "15.00", "45.00"],
        [day, "General entry", "Child (6-17)", "1", "7.50", "1", "7.50", "0.00"],
        [day, "General entry", "Student", "1", "10.00", "1", "10.00", "0.00"],
        [day, "General entry", "Senior (65+)", "2", "24.00", "0", "0.00", "24.00"],
        [day, "Night tour", "Adult", "1", "20.00", "0", "0.00", "20.00"],
        [day, "Donation", "Acquisitions", "1", "6.00", "0", "0.00", "6.00"],
        ["Total", "", "", "10", "127.50", "3", "32.50", "95.00"],
    ]
    assert takings == [
        ["Paid by", "Payments", *money("Gross", "Refunds", "Net")],
        ["Card at the desk", "1", "15.00", "15.00", "0.00"],
        ["Cash at the desk", "1", "30.00", "0.00", "30.00"],
        ["On account: hotel-adler", "2", "45.00", "10.00", "35.00"],
        ["Stripe", "1", "37.50", "7.50", "30.00"],
        ["Total", "5", "127.50", "32.50", "95.00"],
    ]
    assert discounts[0] == ["Voucher tag", "Tickets", *money("Discount")]
    assert discounts[-1] == ["Total", "0", "0.00"]  # no voucher was used
    # The totals are the database's: every payment that confirmed an order, every refund.
    payments = Payment.objects.filter(state="confirmed", order__date=a_day_of_sales)
    refunds = Refund.objects.filter(order__date=a_day_of_sales)
    gross = db_cents(payments.aggregate(total=Sum("amount"))["total"])
    back = db_cents(refunds.aggregate(total=Sum("amount"))["total"])
    for header, *_, total in (sales, takings):
        columns = [header.index(name) for name in money("Gross", "Refunds", "Net")]
        assert [cents(total[column]) for column in columns] == [gross, back, gross - back]
    for row in sales[1:-1]:  # each row adds up
        assert cents(row[4]) - cents(row[6]) == cents(row[7])


def test_the_form_shows_the_range_the_tables_are_for(desk_client):
    asked = desk_client.get(SALES, {"first": "2030-06-01", "last": "2030-06-30"}).content.decode()
    default = desk_client.get(SALES).content.decode()

    assert 'name="first" value="2030-06-01"' in asked and 'name="last" value="2030-06-30"' in asked
    assert 'name="first" value="' in default and 'name="last" value="' in default


def test_a_visitor_sees_no_report(client):
    assert Client().get(SALES).status_code == 302  # to the admin's login


def test_the_discounts_by_voucher_tag_are_the_valid_tickets_and_the_report_still_reconciles(
    desk_client,
):
    day = MuseumDayFactory(date=later()).date
    Voucher.objects.create(code="SCHOOL", effect="free", tag="schools")
    Voucher.objects.create(code="THREE", effect="amount_off", value=Decimal("3"), tag="promo")
    partner = client_for(partner_member(username="hotel-adler"))
    orders = "/v1.1/orders"
    school = partner.post(orders, order_body(day, ("child", 3), voucher="school"), format="json")
    promo = partner.post(orders, order_body(day, ("adult", 2), voucher="three"), format="json")
    plain = partner.post(orders, order_body(day, ("adult", 1)), format="json")
    assert {school.status_code, promo.status_code, plain.status_code} == {201}
    child = school.json()["tickets"][0]
    school_order = school.json()["orderId"]
    cancelled = partner.post(f"{orders}/{school_order}/tickets/{child['ticketId']}/cancel")
    assert cancelled.status_code == 200, cancelled.content

    page = desk_client.get(SALES, {"first": day, "last": day}).content.decode()
    sales, takings, discounts = Tables(page).tables

    assert discounts == [
        ["Voucher tag", "Tickets", *money("Discount")],
        ["promo", "2", "6.00"],
        ["schools", "2", "15.00"],
        ["Total", "4", "21.00"],
    ]
    valid = Ticket.objects.filter(cancelled_at__isnull=True, date=day, voucher__isnull=False)
    assert cents(discounts[-1][2]) == db_cents(valid.aggregate(total=Sum("discount"))["total"])
    # The sales' gross is after the discounts, and the takings still agree with it.
    payments = Payment.objects.filter(state="confirmed", order__date=day)
    gross = db_cents(payments.aggregate(total=Sum("amount"))["total"])
    assert cents(sales[-1][4]) == cents(takings[-1][2]) == gross
    assert cents(sales[-1][-1]) == cents(takings[-1][-1])
