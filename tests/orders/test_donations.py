"""Donations: beside tickets and alone, through the API; in the order's total at 0 % tax, on its
receipt apart with the museum's charity statement; refused outside their fund's bounds or to an
inactive fund; kept by a visitor's cancellation and given back only by staff, with a credit
note; an order's paid and paid back always the sums of its payments and refunds."""

import re
from decimal import Decimal

import pytest
from django.core import mail
from django.db.models import Sum
from django.test import Client

from orders.models import (
    Donation,
    Fund,
    Order,
    OrderStatus,
    Refund,
    SaleDocument,
    VisitorCategory,
)
from orders.notifications import send_order_confirmation
from tests.conftest import assert_problem, client_for
from tests.factories import UserFactory
from tests.orders.conftest import later, order_body

ORDERS = "/v1.1/orders"
STATEMENT = "The museum is a registered charity (RSIN 123456789); gifts may be tax deductible."


@pytest.fixture
def fund(db):
    return Fund.objects.create(
        name="Acquisitions",
        name_de="Ankäufe",
        description="Buying art",
        minimum=Decimal("5.00"),
        maximum=Decimal("500.00"),
        suggested_amounts=["10.00", "25.00"],
    )


@pytest.fixture(autouse=True)
def taxed_tickets(db):
    """Tickets at 9 %, so a donation's 0 % stands apart."""
    VisitorCategory.objects.update(tax_rate=Decimal("9"))


@pytest.fixture(autouse=True)
def charity(settings):
    settings.MUSEUM_CHARITY_STATEMENT = STATEMENT
    settings.MUSEUM_CHARITY_STATEMENTS = {"de": "Das Museum ist gemeinnützig."}


def pay_with_demo(client, order_id: str) -> None:
    started = client.post(f"{ORDERS}/{order_id}/payments", {"provider": "demo"}, format="json")
    assert started.status_code == 201, started.content
    assert Client().post(started.json()["payUrl"], {"outcome": "pay"}).status_code == 302


def placed(client, *lines, **extra) -> dict:
    answer = client.post(ORDERS, order_body(later(), *lines, **extra), format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def given(client, fund, amount=25, **extra) -> dict:
    body = {"donations": [{"fund": fund.pk, "amount": amount}], "email": "ada@example.com"}
    answer = client.post("/v1.1/donations", {**body, **extra}, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def assert_ledgers_add_up():
    for order in Order.objects.all():
        confirmed = order.payments.filter(state="confirmed").aggregate(s=Sum("amount"))["s"]
        refunded = order.refunds.aggregate(s=Sum("amount"))["s"]
        assert order.paid == (confirmed or 0) and order.paid_back == (refunded or 0), order


def test_a_donation_beside_tickets_is_in_the_total_untaxed_and_apart_on_the_receipt(
    online_client, open_day, fund
):
    order = placed(online_client, ("adult", 2), donations=[{"fund": fund.pk, "amount": 10}])
    tickets = sum(Decimal(str(t["price"])) for t in order["tickets"])
    assert order["total"] == tickets + 10 and order["status"] == "held"
    assert order["donations"] == [
        {
            "donationId": order["donations"][0]["donationId"],
            "fund": fund.pk,
            "name": "Acquisitions",
            "amount": 10,
            "refunded": False,
        }
    ]
    untaxed = [rate for rate in order["taxes"] if rate["rate"] == 0]
    assert untaxed == [{"rate": 0, "net": 10, "tax": 0, "gross": 10}]
    assert sum(Decimal(str(rate["gross"])) for rate in order["taxes"]) == order["total"]

    pay_with_demo(online_client, order["orderId"])
    paid = Order.objects.get(pk=order["orderId"])
    assert paid.status == OrderStatus.CONFIRMED and paid.paid_in_full()
    receipt = SaleDocument.objects.get(order=paid)
    [donation] = [line for line in receipt.lines if line.get("donation")]
    assert donation["description"] == "Donation: Acquisitions"
    assert (Decimal(donation["rate"]), Decimal(donation["tax"])) == (0, 0)
    assert donation["gross"] == "10.00"
    assert receipt.total == paid.total and receipt.charity_statement == STATEMENT
    pdf = online_client.get(f"{ORDERS}/{order['orderId']}/documents/{receipt.number}")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert_ledgers_add_up()


def test_a_quote_prices_the_donations_too(online_client, open_day, fund):
    quote = online_client.post(
        ORDERS,
        order_body(later(), ("adult", 1), dryRun=True, donations=[{"fund": fund.pk, "amount": 7}]),
        format="json",
    )
    assert quote.status_code == 200, quote.content
    body = quote.json()
    assert body["donations"] == [{"fund": fund.pk, "name": "Acquisitions", "amount": 7}]
    assert body["total"] == body["lines"][0]["price"] + 7
    assert {"rate": 0, "net": 7, "tax": 0, "gross": 7} in body["taxes"]
    assert not Donation.objects.exists()


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({"amount": 4.99}, "donations.0.amount"),
        ({"amount": 500.01}, "donations.0.amount"),
        ({"fund": 0}, "donations.0.fund"),
        # No row's key: SQLite could not even compare it (it had failed with a 500).
        ({"fund": 2**63}, "donations.0.fund"),
        ({"fund": 7032203474563535732736}, "donations.0.fund"),
    ],
    ids=["below-minimum", "above-maximum", "unknown-fund", "past-64-bits", "past-72-bits"],
)
def test_a_donation_outside_its_funds_bounds_is_refused_naming_the_field(
    online_client, open_day, fund, line, field
):
    donation = {"fund": fund.pk, "amount": 10, **line}
    answer = online_client.post(
        ORDERS, order_body(later(), ("adult", 1), donations=[donation]), format="json"
    )
    assert field in assert_problem(answer, 400)["errors"]
    alone = online_client.post(
        "/v1.1/donations", {"donations": [donation], "email": "a@example.com"}, format="json"
    )
    assert field in assert_problem(alone, 400)["errors"]
    assert not Order.objects.exists()


def test_an_inactive_fund_takes_nothing_and_is_not_listed(online_client, open_day, fund):
    Fund.objects.filter(pk=fund.pk).update(active=False)
    answer = online_client.post(
        ORDERS,
        order_body(later(), ("adult", 1), donations=[{"fund": fund.pk, "amount": 10}]),
        format="json",
    )
    assert "donations.0.fund" in assert_problem(answer, 400)["errors"]
    assert online_client.get("/v1.1/funds").json() == []


def test_at_most_five_donations_an_order(online_client, open_day, fund):
    lines = [{"fund": fund.pk, "amount": 5}] * 6
    answer = online_client.post(
        ORDERS, order_body(later(), ("adult", 1), donations=lines), format="json"
    )
    assert "donations" in assert_problem(answer, 400)["errors"]


def test_funds_are_listed_in_the_requests_language(online_client, fund):
    Fund.objects.create(name="Old", active=False)
    answer = online_client.get("/v1.1/funds", HTTP_ACCEPT_LANGUAGE="de")
    assert answer.status_code == 200
    assert answer.json() == [
        {
            "fund": fund.pk,
            "name": "Ankäufe",
            "description": "Buying art",
            "minimum": 5,
            "maximum": 500,
            "suggestedAmounts": [10, 25],
            "currency": "EUR",
        }
    ]


def test_a_donation_alone_is_held_until_paid_and_its_buyer_cannot_cancel_it(online_client, fund):
    order = given(online_client, fund, amount=25, language="de")
    assert order["ticketType"] == "donation" and order["status"] == "held"
    assert order["total"] == 25 and order["tickets"] == []
    assert order["taxes"] == [{"rate": 0, "net": 25, "tax": 0, "gross": 25}]
    pay_with_demo(online_client, order["orderId"])
    paid = Order.objects.get(pk=order["orderId"])
    assert paid.status == OrderStatus.CONFIRMED and paid.paid_in_full()
    receipt = SaleDocument.objects.get(order=paid)
    # In the buyer's language (the words around the fund's name once the lead translates them).
    assert "Ankäufe" in receipt.lines[0]["description"]
    assert receipt.charity_statement == "Das Museum ist gemeinnützig."
    assert receipt.total == 25 and receipt.tax == 0
    send_order_confirmation(order=paid)  # what its email task sends
    assert mail.outbox[-1].to == ["ada@example.com"]
    assert "Ankäufe" in mail.outbox[-1].body
    refused = online_client.post(f"{ORDERS}/{order['orderId']}/cancel")
    assert assert_problem(refused, 409)["code"] == "donation_given"
    assert online_client.get(f"{ORDERS}/{order['orderId']}/tickets.pdf").status_code == 404


def test_a_held_donation_may_be_let_go(online_client, fund):
    order = given(online_client, fund)
    answer = online_client.post(f"{ORDERS}/{order['orderId']}/cancel")
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "cancelled"


def test_the_visitors_cancellation_keeps_the_donation_and_staff_give_it_back(
    online_client, staff_client, open_day, fund
):
    order = placed(online_client, ("adult", 1), donations=[{"fund": fund.pk, "amount": 20}])
    pay_with_demo(online_client, order["orderId"])
    cancelled = online_client.post(f"{ORDERS}/{order['orderId']}/cancel")
    assert cancelled.status_code == 200, cancelled.content
    ticket_price = Decimal(str(order["tickets"][0]["price"]))
    assert cancelled.json()["refundDue"] == ticket_price
    assert cancelled.json()["donations"][0]["refunded"] is False
    assert not Refund.objects.filter(donation__isnull=False).exists()

    donation = order["donations"][0]["donationId"]
    refund = f"{ORDERS}/{order['orderId']}/donations/{donation}/refund"
    assert_problem(online_client.post(refund), 403)
    assert_problem(client_for(UserFactory(username="other")).post(refund), 404)
    answer = staff_client.post(refund)
    assert answer.status_code == 200, answer.content
    assert answer.json()["donations"][0]["refunded"] is True
    assert answer.json()["refundDue"] == ticket_price + 20
    [back] = Refund.objects.filter(donation=donation)
    assert back.amount == 20 and back.source == "staff"
    credit = SaleDocument.objects.filter(order_id=order["orderId"], kind="credit_note")
    donation_note = [note for note in credit if any(line.get("donation") for line in note.lines)]
    [note] = donation_note
    assert note.total == -20 and note.tax == 0 and note.charity_statement == STATEMENT
    assert assert_problem(staff_client.post(refund), 409)["code"] == "donation_refunded"
    order_row = Order.objects.get(pk=order["orderId"])
    assert order_row.paid_back == order_row.paid == order_row.total
    assert_ledgers_add_up()


def test_cancelling_a_held_orders_ticket_keeps_its_donation_in_the_total(
    online_client, open_day, fund
):
    order = placed(
        online_client, ("adult", 1), ("child", 1), donations=[{"fund": fund.pk, "amount": 10}]
    )
    child = next(t for t in order["tickets"] if t["category"] == "child")
    answer = online_client.post(f"{ORDERS}/{order['orderId']}/tickets/{child['ticketId']}/cancel")
    assert answer.status_code == 200, answer.content
    adult = next(t for t in order["tickets"] if t["category"] == "adult")
    assert answer.json()["total"] == adult["price"] + 10


def test_the_confirmation_email_links_a_page_to_give_and_it_makes_a_donation_to_pay(
    online_client, open_day, fund
):
    order = placed(online_client, ("adult", 1))
    pay_with_demo(online_client, order["orderId"])
    send_order_confirmation(order=Order.objects.get(pk=order["orderId"]))
    [email] = [m for m in mail.outbox if order["confirmationCode"] in m.body]
    link = re.search(r"http\S+/orders/donate/\S+", email.body).group(0)
    page = Client().get(link.replace("http://127.0.0.1:8000", ""))
    assert page.status_code == 200 and b"Acquisitions" in page.content
    assert b'value="10.00"' in page.content  # a suggested amount, as a button
    path = link.replace("http://127.0.0.1:8000", "")
    too_little = Client().post(path, {"fund": fund.pk, "amount": "1"})
    assert too_little.status_code == 400
    sent = Client().post(path, {"fund": fund.pk, "amount": "10.00"})
    assert sent.status_code == 302
    gift = Order.objects.get(ticket_type="donation")
    assert gift.buyer_id == Order.objects.get(pk=order["orderId"]).buyer_id
    assert gift.total == 10 and gift.status == OrderStatus.HELD
    assert Client().post(sent["Location"], {"outcome": "pay"}).status_code == 302
    gift.refresh_from_db()
    assert gift.status == OrderStatus.CONFIRMED
    assert Client().get(path.replace("donate/", "donate/x")).status_code == 404


def test_the_admin_keeps_a_funds_suggested_amounts_amounts_it_takes(desk_client, settings):
    # The staff group describes funds; its suggested amounts must be amounts the fund takes.
    body = {
        "name_en": "Garden",
        "description_en": "",
        "minimum": "5.00",
        "maximum": "100.00",
        "suggested_amounts": '["10.00", "lots"]',
        "ordering": "0",
        "active": "on",
    }
    refused = desk_client.post("/admin/orders/fund/add/", body)
    assert refused.status_code == 200 and not Fund.objects.filter(name="Garden").exists()
    saved = desk_client.post(
        "/admin/orders/fund/add/", {**body, "suggested_amounts": '["10.00", "25.00"]'}
    )
    assert saved.status_code == 302, saved.content
    assert Fund.objects.get(name="Garden").suggested_amounts == ["10.00", "25.00"]
