"""Tax on what is sold: each line's net, tax and gross computed once, by one rule (per line, half
up to the cent), kept on the line as sold, and an order's totals per rate the sums of its lines,
with prices gross (the default) or net (MUSEUM_PRICES_INCLUDE_TAX=false)."""

from decimal import Decimal

import pytest

from orders.models import MembershipType, Ticket, VisitorCategory
from orders.services.taxes import taxed, totals_by_rate
from tests.factories import SpecialEventFactory
from tests.orders.conftest import later, order_body

ORDERS = "/v1.1/orders"


@pytest.mark.parametrize(
    ("price", "rate", "net", "tax", "gross"),
    [
        ("10.00", "9", "9.17", "0.83", "10.00"),
        ("15.00", "21", "12.40", "2.60", "15.00"),
        ("7.50", "0", "7.50", "0.00", "7.50"),
        # 0.045 → 0.05: half up, not to even.
        ("1.09", "9", "1.00", "0.09", "1.09"),
        ("0.00", "9", "0.00", "0.00", "0.00"),
    ],
)
def test_a_gross_price_is_split_into_net_and_tax_to_the_cent(price, rate, net, tax, gross):
    line = taxed(price=Decimal(price), rate=Decimal(rate))
    assert (line.net, line.tax, line.gross) == (Decimal(net), Decimal(tax), Decimal(gross))
    assert line.net + line.tax == line.gross


@pytest.mark.parametrize(
    ("price", "rate", "tax", "gross"),
    [
        ("10.00", "9", "0.90", "10.90"),
        ("0.50", "9", "0.05", "0.55"),
        ("12.40", "21", "2.60", "15.00"),
    ],
)
def test_a_net_price_has_its_tax_added(settings, price, rate, tax, gross):
    settings.MUSEUM_PRICES_INCLUDE_TAX = False
    line = taxed(price=Decimal(price), rate=Decimal(rate))
    assert (line.net, line.tax, line.gross) == (Decimal(price), Decimal(tax), Decimal(gross))


def test_totals_per_rate_are_the_sums_of_the_lines_never_rounded_again():
    # Three lines of 0.83 tax each: 2.49, where taxing their sum (30.00 at 9 %) gives 2.48.
    lines = [(Decimal("9"), Decimal("10.00"), Decimal("0.83"))] * 3 + [
        (Decimal("0"), Decimal("7.50"), Decimal("0.00"))
    ]
    [zero, nine] = totals_by_rate(lines)
    assert (zero.rate, zero.gross, zero.tax, zero.net) == (0, Decimal("7.50"), 0, Decimal("7.50"))
    assert (nine.gross, nine.tax, nine.net) == (Decimal("30.00"), Decimal("2.49"), Decimal("27.51"))


def rates(adult: str, child: str) -> None:
    for code, rate in (("adult", adult), ("child", child)):
        category = VisitorCategory.objects.get(category=code)
        category.tax_rate = Decimal(rate)
        category.save()  # as the admin does: the sale's kept categories are read again


@pytest.mark.parametrize("include_tax", [True, False])
def test_an_order_of_mixed_rates_says_its_tax_per_rate_and_each_tickets(
    visitor_client, open_day, settings, include_tax
):
    settings.MUSEUM_PRICES_INCLUDE_TAX = include_tax
    rates(adult="9", child="21")  # adult 15.00, child 7.50

    answer = visitor_client.post(
        ORDERS, order_body(open_day.date, ("adult", 2), ("child", 1)), format="json"
    )

    assert answer.status_code == 201, answer.content
    order = answer.json()
    if include_tax:
        assert order["total"] == 37.5
        expected = [
            {"rate": 9, "net": 27.52, "tax": 2.48, "gross": 30},
            {"rate": 21, "net": 6.2, "tax": 1.3, "gross": 7.5},
        ]
    else:  # the catalogue's prices are net: 15.00 + 1.35 tax, 7.50 + 1.58 tax
        assert order["total"] == 16.35 * 2 + 9.08
        expected = [
            {"rate": 9, "net": 30, "tax": 2.7, "gross": 32.7},
            {"rate": 21, "net": 7.5, "tax": 1.58, "gross": 9.08},
        ]
    assert order["taxes"] == expected
    assert sum(Decimal(str(rate["gross"])) for rate in order["taxes"]) == Decimal(
        str(order["total"])
    )
    adult = next(t for t in order["tickets"] if t["category"] == "adult")
    assert adult["taxRate"] == 9 and adult["tax"] == (1.24 if include_tax else 1.35)
    # Kept on the line as sold: a later change of the rate changes no sale made.
    rates(adult="0", child="0")
    again = visitor_client.get(f"{ORDERS}/{order['orderId']}").json()
    assert again["taxes"] == expected
    kept = Ticket.objects.filter(order_id=order["orderId"], category__category="adult")
    assert {t.tax_rate for t in kept} == {Decimal("9")}


def test_an_event_ticket_is_taxed_at_the_events_rate_and_a_quote_says_so(visitor_client):
    rates(adult="9", child="9")
    event = SpecialEventFactory(price=Decimal("20"), tax_rate=Decimal("21"), dates=[later()])
    body = order_body(later(), ("adult", 1), ticketType="event", eventId=str(event.pk))

    quote = visitor_client.post(ORDERS, {**body, "dryRun": True}, format="json")
    placed = visitor_client.post(ORDERS, body, format="json")

    assert quote.status_code == 200, quote.content
    assert quote.json()["taxes"] == [{"rate": 21, "net": 16.53, "tax": 3.47, "gross": 20}]
    assert placed.json()["taxes"] == quote.json()["taxes"]


def test_a_membership_is_taxed_at_its_types_rate(visitor_client, settings):
    settings.MUSEUM_PRICES_INCLUDE_TAX = False
    MembershipType.objects.create(
        code="individual", name="Individual", price=Decimal("60"), tax_rate=Decimal("9")
    )

    types = visitor_client.get("/v1.1/membership-types").json()
    answer = visitor_client.post(
        "/v1.1/memberships",
        {"membershipType": "individual", "holderName": "Ada", "email": "ada@example.com"},
        format="json",
    )

    assert types[0]["price"] == 65.4 and types[0]["taxRate"] == 9
    assert answer.status_code == 201, answer.content
    order = answer.json()["order"]
    assert order["total"] == 65.4
    assert order["taxes"] == [{"rate": 9, "net": 60, "tax": 5.4, "gross": 65.4}]


def test_a_page_of_membership_orders_reads_their_lines_in_one_query(
    visitor_client, django_assert_max_num_queries
):
    MembershipType.objects.create(code="individual", name="Individual", price=Decimal("60"))

    def buy():
        body = {"membershipType": "individual", "holderName": "Ada", "email": "ada@example.com"}
        assert visitor_client.post("/v1.1/memberships", body, format="json").status_code == 201

    buy()
    # One more than before donations: the page's donations, with their funds, in one query.
    with django_assert_max_num_queries(9) as one:
        assert visitor_client.get(ORDERS).json()[0]["taxes"][0]["gross"] == 60
        queries = len(one.captured_queries)
    buy(), buy()
    with django_assert_max_num_queries(queries):
        assert len(visitor_client.get(ORDERS).json()) == 3


def test_a_ticket_cancelled_while_held_leaves_the_taxes_as_it_left_the_total(
    online_client, staff_client, open_day
):
    rates(adult="9", child="21")
    order = online_client.post(
        ORDERS, order_body(open_day.date, ("adult", 2), ("child", 1)), format="json"
    ).json()
    child = next(t for t in order["tickets"] if t["category"] == "child")
    url = f"{ORDERS}/{order['orderId']}"
    assert online_client.post(f"{url}/tickets/{child['ticketId']}/cancel").status_code == 200
    paid = staff_client.post(
        f"{url}/payments", {"provider": "desk", "method": "card"}, format="json"
    )
    assert paid.status_code == 201, paid.content

    confirmed = online_client.get(url).json()

    assert confirmed["status"] == "confirmed" and confirmed["total"] == 30
    assert confirmed["taxes"] == [{"rate": 9, "net": 27.52, "tax": 2.48, "gross": 30}]
