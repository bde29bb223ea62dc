"""Money before places: online accounts pay through a provider before an order is confirmed,
sales partners sell on account, and nobody hoards places or someone's mailbox."""

import csv
import io

import pytest
from django.core import mail
from django.test import Client

from orders.models import Order, OrderStatus, SaleLimits, VisitorCategory
from tests.conftest import assert_problem, client_for
from tests.factories import MuseumDayFactory, UserFactory, partner_member
from tests.orders.conftest import later, order_body


def place(client, day, *lines, **extra):
    return client.post("/v1.1/orders", order_body(day, *lines, **extra), format="json")


@pytest.fixture
def day(db):
    return MuseumDayFactory(date=later()).date


def test_an_online_purchase_is_held_with_no_ticket_until_paid(online_client, day):
    bought = online_client.post(
        "/v1.1/tickets",
        {"ticketType": "general", "ticketDate": day.isoformat(), "email": "a@example.com"},
        format="json",
    )

    assert bought.status_code == 201
    assert "awaiting payment until" in bought.json()["message"]
    order = Order.objects.get(tickets__pk=bought.json()["ticketId"])
    assert order.status == OrderStatus.HELD
    assert_problem(online_client.get(f"/v1.1/tickets/{bought.json()['ticketId']}/qr"), 409)
    pdf = online_client.get(f"/v1.1/orders/{order.pk}/tickets.pdf")
    assert pdf.status_code == 409 and pdf.json()["code"] == "not_paid"


def test_nobody_confirms_an_unpaid_online_order_by_hand(online_client, staff_client, day):
    order = place(online_client, day, ("adult", 2)).json()
    url = f"/v1.1/orders/{order['orderId']}/confirm"

    assert online_client.post(url).json()["code"] == "payment_required"
    assert staff_client.post(url).status_code == 402
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.HELD


def test_the_desk_takes_a_payment_and_the_order_is_confirmed(online_client, staff_client, day):
    order = place(online_client, day, ("adult", 1)).json()
    payments = f"/v1.1/orders/{order['orderId']}/payments"

    refused = online_client.post(payments, {"provider": "desk"}, format="json")
    paid = staff_client.post(payments, {"provider": "desk", "method": "cash"}, format="json")

    assert refused.status_code == 400 and "provider" in refused.json()["errors"]
    assert paid.status_code == 201 and paid.json()["state"] == "confirmed"
    assert online_client.get(f"/v1.1/orders/{order['orderId']}").json()["status"] == "confirmed"
    again = staff_client.post(payments, {"provider": "desk"}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "nothing_to_pay"


def test_a_declined_demo_payment_leaves_the_order_held(online_client, day):
    order = place(online_client, day, ("adult", 1)).json()
    payments = f"/v1.1/orders/{order['orderId']}/payments"
    payment = online_client.post(payments, {"provider": "demo"}, format="json").json()

    assert Client().post(payment["payUrl"], {"outcome": "decline"}).status_code == 302

    assert [p["state"] for p in online_client.get(payments).json()] == ["failed"]
    assert Order.objects.get(pk=order["orderId"]).status == OrderStatus.HELD


def test_the_demo_provider_is_never_offered_with_debug_off(online_client, day, settings):
    settings.MUSEUM_DEMO_PAYMENTS = False
    order = place(online_client, day, ("adult", 1)).json()

    answer = online_client.post(
        f"/v1.1/orders/{order['orderId']}/payments", {"provider": "demo"}, format="json"
    )

    assert answer.status_code == 400 and "provider" in answer.json()["errors"]


def test_a_free_order_needs_no_payment_but_infants_need_a_companion(online_client, day):
    VisitorCategory.objects.create(category="member", name="Member", general_price=0)

    free = place(online_client, day, ("member", 2))
    infants = place(online_client, day, ("infant", 3))

    assert free.status_code == 201 and free.json()["status"] == "confirmed"
    assert infants.status_code == 400 and "lines" in infants.json()["errors"]
    assert place(online_client, day, ("infant", 1), ("member", 1)).status_code == 201


def test_a_partner_sells_on_account_at_once(visitor_client, day):
    sold = place(visitor_client, day, ("adult", 2))

    assert sold.status_code == 201
    assert (sold.json()["status"], sold.json()["channel"]) == ("confirmed", "on_account")
    payments = visitor_client.get(f"/v1.1/orders/{sold.json()['orderId']}/payments").json()
    assert [(p["provider"], p["amount"]) for p in payments] == [("on_account", 30)]


@pytest.fixture
def small_limits(settings):
    settings.MUSEUM_MAX_HELD_PLACES = 3
    settings.MUSEUM_MAX_PLACES_PER_DAY = 4


def test_an_online_account_holds_only_so_many_places_and_cancelling_gains_nothing(
    online_client, day, small_limits
):
    held = place(online_client, day, ("adult", 3)).json()
    online_client.post(f"/v1.1/orders/{held['orderId']}/cancel")

    over = place(online_client, day, ("adult", 1))

    assert over.status_code == 429
    assert (over.json()["code"], over.json()["limit"]) == ("too_many_held_places", 3)


def test_an_online_account_takes_only_so_many_places_a_day(
    online_client, staff_client, day, small_limits
):
    first = place(online_client, day, ("adult", 3)).json()
    paid = staff_client.post(
        f"/v1.1/orders/{first['orderId']}/payments", {"provider": "desk"}, format="json"
    )
    assert paid.status_code == 201

    over = place(online_client, day, ("adult", 2))
    other_day = place(online_client, MuseumDayFactory(date=later(4)).date, ("adult", 2))

    assert over.status_code == 429 and over.json()["code"] == "too_many_places"
    assert other_day.status_code == 201


def test_a_shop_with_its_own_limits_still_limits_each_address(db, day, small_limits):
    shop = UserFactory(username="shop")
    SaleLimits.objects.create(account=shop, max_held_places=100, max_places_per_day=100)
    client = client_for(shop)

    assert place(client, day, ("adult", 3)).status_code == 201
    same = place(client, day, ("adult", 1))
    other = place(client, day, ("adult", 3), email="someone.else@example.com")

    assert same.status_code == 429 and same.json()["limit"] == 3
    assert other.status_code == 201


def test_partners_have_no_limits_unless_staff_set_them(visitor_client, day, small_limits):
    assert place(visitor_client, day, ("adult", 5), hold=True).status_code == 201
    SaleLimits.objects.create(account=Order.objects.get().buyer, max_places_per_day=6)

    over = place(visitor_client, day, ("adult", 2))

    assert over.status_code == 429 and over.json()["limit"] == 6


def test_an_address_gets_only_so_many_confirmation_emails_a_day(online_client, day, settings):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 2
    VisitorCategory.objects.create(category="member", name="Member", general_price=0)

    orders = [place(online_client, day, ("member", 1)).json() for _ in range(3)]

    assert [o["status"] for o in orders] == ["confirmed"] * 3
    mailed = Order.objects.exclude(confirmation_task_id="").count()
    assert mailed == 2 and not mail.outbox  # the worker sends them


def test_the_monthly_on_account_list_per_partner(desk_client, day):
    partner = client_for(partner_member(username="reseller"))
    first = place(partner, day, ("adult", 2)).json()
    place(partner, day, ("child", 1))
    partner.post(
        f"/v1.1/orders/{first['orderId']}/tickets/{first['tickets'][0]['ticketId']}/cancel"
    )

    page = desk_client.get("/admin/orders/payment/on-account/")
    exported = desk_client.get("/admin/orders/payment/on-account/", {"format": "csv"})

    assert page.status_code == 200 and b"reseller" in page.content
    [header, row] = list(csv.reader(io.StringIO(exported.content.decode())))
    line = dict(zip(header, row, strict=True))
    assert (line["partner"], line["orders"]) == ("reseller", "2")
    # Money as the sales report writes it (museum.admin_pages.csv_response).
    assert (line["sold"], line["credited"], line["due"]) == ("37.50", "15.00", "22.50")


def test_staff_without_the_desk_permission_cannot_take_payments(online_client, day):
    order = place(online_client, day, ("adult", 1)).json()
    bare = client_for(UserFactory(username="bare", is_staff=True))

    answer = bare.post(
        f"/v1.1/orders/{order['orderId']}/payments", {"provider": "desk"}, format="json"
    )

    assert answer.status_code == 400
