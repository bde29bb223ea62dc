"""The desk takes a donation beside a sale and alone, through the donations' own rules; an order's
page shows its donations."""

from decimal import Decimal

from orders.models import Donation, Fund, Order, OrderStatus, SaleDocument
from tests.desk.test_desk import sale
from tests.factories import MuseumDayFactory
from tests.orders.conftest import later


def a_fund() -> Fund:
    return Fund.objects.create(name="Education", minimum=Decimal("2"), maximum=Decimal("100"))


def test_a_sale_with_a_donation_is_paid_whole_and_shows_it(desk):
    day = MuseumDayFactory(date=later())
    fund = a_fund()

    answer = desk.post(
        "/desk/sell/", sale(day.date, fund=fund.pk, donation="5", tendered="50"), follow=True
    )

    order = Order.objects.get()
    assert order.status == OrderStatus.CONFIRMED and order.total == Decimal("42.50")
    assert [(d.fund_id, d.amount) for d in order.donations.all()] == [(fund.pk, 5)]
    assert "Donation to Education: 5.00" in answer.content.decode()
    assert SaleDocument.objects.get(order=order).total == Decimal("42.50")


def test_a_donation_below_its_funds_minimum_sells_nothing(desk):
    day = MuseumDayFactory(date=later())
    fund = a_fund()

    answer = desk.post("/desk/sell/", sale(day.date, fund=fund.pk, donation="1", tendered="50"))

    assert answer.status_code == 200 and b"A donation to this fund is" in answer.content
    assert not Order.objects.exists()


def test_the_desk_takes_a_donation_alone_in_cash(desk):
    fund = a_fund()

    answer = desk.post(
        "/desk/donations/sell/",
        {"fund": fund.pk, "donation": "20", "payment": "cash", "tendered": "20"},
        follow=True,
    )

    assert answer.status_code == 200
    donation = Donation.objects.get()
    assert donation.order.status == OrderStatus.CONFIRMED and donation.order.total == 20
    assert donation.order.ticket_type == "donation"
    assert "Print the tickets" not in answer.content.decode()
