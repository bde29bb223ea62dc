"""The desk takes a voucher code: it prices and sells with it where its channels include the
desk, and tells the clerk why it does not apply."""

from decimal import Decimal

from orders.models import Order, Voucher
from tests.desk.test_desk import desk, sale  # noqa: F401 (the fixture)
from tests.factories import MuseumDayFactory
from tests.orders.conftest import later


def test_the_desk_prices_and_sells_with_a_voucher(desk):  # noqa: F811
    day = MuseumDayFactory(date=later())
    Voucher.objects.create(code="SCHOOL", effect="free", channels=["desk"], max_uses=30)
    priced = {**sale(day.date, voucher="school"), "price": ""}
    del priced["sell"]

    quote = desk.post("/desk/sell/", priced)
    desk.post("/desk/sell/", sale(day.date, voucher="school"))

    assert b"Total: <strong>0.00 EUR" in quote.content
    order = Order.objects.get()
    assert order.total == Decimal("0.00")
    assert Voucher.objects.get().uses == 3


def test_the_clerk_is_told_why_a_voucher_does_not_apply(desk):  # noqa: F811
    day = MuseumDayFactory(date=later())
    Voucher.objects.create(code="WEBONLY", effect="free", channels=["online"])

    answer = desk.post("/desk/sell/", sale(day.date, voucher="WEBONLY"))

    assert b"The voucher is not for this channel." in answer.content
    assert not Order.objects.exists()
