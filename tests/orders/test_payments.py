"""Money before places: online accounts pay through a provider before an order is confirmed,
sales partners sell on account, and nobody hoards places or someone's mailbox."""

import csv
import datetime as dt
import io
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from orders.models import Order, OrderStatus, Refund, SaleLimits, VisitorCategory, Voucher
from orders.services.holds import release_expired_holds
from orders.services.limits import mailbox_of
from tests.conftest import assert_problem, client_for
from tests.factories import MuseumDayFactory, UserFactory, partner_member
from tests.orders.conftest import later, order_body

ORDERS = "/v1.1/orders"


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


def test_a_tickets_image_url_is_listed_only_when_its_image_is_served(
    online_client, staff_client, day
):
    """And the order's PDF alike (`pdfUrl`): the same rule, selectors.refuse_unless_printable."""

    def image_urls(order_id: str) -> list[str | None]:
        order = online_client.get(f"/v1.1/orders/{order_id}").json()
        tickets = [ticket["imageUrl"] for ticket in order["tickets"]]
        assert order["pdfUrl"] == (
            None if tickets == [None] else f"{ORDERS}/{order_id}/tickets.pdf"
        )
        return tickets

    held = place(online_client, day, ("adult", 1)).json()
    let_go = place(online_client, day, ("adult", 1)).json()
    assert online_client.post(f"/v1.1/orders/{let_go['orderId']}/cancel").status_code == 200
    ran_out = place(online_client, day, ("adult", 1)).json()
    Order.objects.filter(pk=ran_out["orderId"]).update(hold_expires_at=timezone.now())

    assert [ticket["imageUrl"] for ticket in held["tickets"]] == [None]
    assert held["pdfUrl"] is None
    assert_problem(online_client.get(f"{ORDERS}/{held['orderId']}/tickets.pdf"), 409)
    assert image_urls(let_go["orderId"]) == image_urls(ran_out["orderId"]) == [None]
    [ticket] = Order.objects.get(pk=held["orderId"]).tickets.all()
    assert_problem(online_client.get(f"/v1.1/tickets/{ticket.pk}/qr"), 409)
    paid = staff_client.post(
        f"/v1.1/orders/{held['orderId']}/payments", {"provider": "desk"}, format="json"
    )
    assert paid.status_code == 201, paid.content
    [url] = image_urls(held["orderId"])
    assert url == f"/v1.1/tickets/{ticket.pk}/qr"
    assert online_client.get(url).status_code == 200
    assert online_client.get(f"{ORDERS}/{held['orderId']}/tickets.pdf").status_code == 200
    # Cancelled once paid, it keeps its image, stamped CANCELLED.
    assert online_client.post(f"/v1.1/orders/{held['orderId']}/cancel").status_code == 200
    [url] = image_urls(held["orderId"])
    assert online_client.get(url).status_code == 200


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


@pytest.mark.parametrize("outcome, state", [("pay", "confirmed"), ("decline", "failed")])
def test_a_pending_demo_payment_lists_its_page_and_not_once_it_is_over(
    online_client, visitor_client, day, outcome, state
):
    order = place(online_client, day, ("adult", 1)).json()
    payments = f"/v1.1/orders/{order['orderId']}/payments"
    started = online_client.post(payments, {"provider": "demo"}, format="json").json()

    [pending] = online_client.get(payments).json()

    assert (pending["state"], pending["payUrl"]) == ("pending", started["payUrl"])
    assert Client().get(pending["payUrl"]).status_code == 200
    assert_problem(visitor_client.get(payments), 404)
    assert Client().post(pending["payUrl"], {"outcome": outcome}).status_code == 302
    [over] = online_client.get(payments).json()
    assert (over["state"], over["payUrl"]) == (state, None)


def test_a_payment_refunded_whole_counts_in_the_orders_refund_due(online_client, visitor_client):
    day = MuseumDayFactory(date=later(), capacity=2).date
    order = place(online_client, day, ("adult", 2)).json()
    payments = f"/v1.1/orders/{order['orderId']}/payments"
    payment = online_client.post(payments, {"provider": "demo"}, format="json").json()
    Order.objects.filter(pk=order["orderId"]).update(hold_expires_at="2000-01-01T00:00:00Z")
    assert release_expired_holds() == 1
    assert place(visitor_client, day, ("adult", 2)).status_code == 201  # the places are gone

    assert Client().post(payment["payUrl"], {"outcome": "pay"}).status_code == 302

    [refund] = Refund.objects.all()
    assert (refund.source, refund.ticket, refund.amount) == ("not_placed", None, Decimal(30))
    answer = online_client.get(f"/v1.1/orders/{order['orderId']}").json()
    assert (answer["status"], answer["refundDue"]) == ("expired", 30.0)
    listed = online_client.get("/v1.1/orders").json()
    assert [(o["orderId"], o["refundDue"]) for o in listed] == [(order["orderId"], 30.0)]


def test_the_demo_provider_is_never_offered_with_debug_off(online_client, day, settings):
    settings.MUSEUM_DEMO_PAYMENTS = False
    order = place(online_client, day, ("adult", 1)).json()

    answer = online_client.post(
        f"/v1.1/orders/{order['orderId']}/payments", {"provider": "demo"}, format="json"
    )

    assert answer.status_code == 400 and "provider" in answer.json()["errors"]


def test_a_free_order_needs_no_payment_but_infants_need_a_companion(online_client, day):
    VisitorCategory.objects.create(category="guest", name="Guest", general_price=0)

    free = place(online_client, day, ("guest", 2))
    infants = place(online_client, day, ("infant", 3))

    assert free.status_code == 201 and free.json()["status"] == "confirmed"
    assert infants.status_code == 400 and "lines" in infants.json()["errors"]
    assert place(online_client, day, ("infant", 1), ("guest", 1)).status_code == 201


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


def test_the_held_places_refusal_says_what_frees_places_and_that_is_what_does(
    online_client, staff_client, day, settings
):
    settings.MUSEUM_MAX_HELD_PLACES = 3
    unpaid = place(online_client, day, ("adult", 2)).json()
    cancelled = place(online_client, day, ("adult", 1)).json()
    online_client.post(f"/v1.1/orders/{cancelled['orderId']}/cancel")

    over = assert_problem(place(online_client, day, ("adult", 1)), 429)

    # Cancelling frees nothing: the refusal names what does, paying or the hold's time.
    assert "cancel a hold" not in over["detail"]
    assert "pay for a held order" in over["detail"] and "hold runs out" in over["detail"]
    paid = staff_client.post(
        f"/v1.1/orders/{unpaid['orderId']}/payments", {"provider": "desk"}, format="json"
    )
    assert paid.status_code == 201, paid.content
    assert place(online_client, day, ("adult", 1)).status_code == 201
    assert_problem(place(online_client, day, ("adult", 2)), 429)
    ran_out = timezone.now() + dt.timedelta(minutes=settings.MUSEUM_PAYMENT_HOLD_MINUTES + 1)
    with time_machine.travel(ran_out):
        assert place(online_client, day, ("adult", 3)).status_code == 201


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
    VisitorCategory.objects.create(category="guest", name="Guest", general_price=0)

    orders = [place(online_client, day, ("guest", 1)).json() for _ in range(3)]

    assert [o["status"] for o in orders] == ["confirmed"] * 3
    mailed = Order.objects.exclude(confirmation_task_id="").count()
    assert mailed == 2 and not mail.outbox  # the worker sends them


def test_every_email_the_museum_sent_counts_toward_the_daily_limit(online_client, day, settings):
    """A voucher's code mailed to the address today fills its one email of the day: the order's
    confirmation is not sent (each app registers its emails: limits.mailbox_full)."""
    from vouchers.models import VoucherEmail

    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 1
    VisitorCategory.objects.create(category="guest", name="Guest", general_price=0)
    voucher = Voucher.objects.create(code="SENT", effect="free")
    VoucherEmail.objects.create(
        voucher=voucher,
        email="family@example.com",
        mailbox="family@example.com",
        language="en",
        sent_at=timezone.now(),
    )

    order = place(online_client, day, ("guest", 1)).json()

    assert order["status"] == "confirmed"
    assert Order.objects.get().confirmation_task_id == ""


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


def test_one_payment_is_in_progress_and_the_hold_is_extended_once(online_client, day, settings):
    settings.MUSEUM_PAYMENT_HOLD_MINUTES = 30
    start = timezone.now()
    order = place(online_client, day, ("adult", 1)).json()
    payments = f"/v1.1/orders/{order['orderId']}/payments"

    def pay(minutes: int):
        with time_machine.travel(start + dt.timedelta(minutes=minutes), tick=False):
            answer = online_client.post(payments, {"provider": "demo"}, format="json")
        assert answer.status_code == 201, answer.content
        return answer.json()

    def hold_ends() -> dt.datetime:
        return Order.objects.get(pk=order["orderId"]).hold_expires_at

    first = pay(5)
    assert hold_ends() == start + dt.timedelta(minutes=35)
    again = pay(20)  # the same payment in progress, answered again; the hold stays
    assert (again["paymentId"], again["payUrl"]) == (first["paymentId"], first["payUrl"])
    assert hold_ends() == start + dt.timedelta(minutes=35)

    assert Client().post(first["payUrl"], {"outcome": "decline"}).status_code == 302
    second = pay(30)  # a new payment after a declined one: the hold still ends 30 after the first
    assert second["paymentId"] != first["paymentId"]
    assert hold_ends() == start + dt.timedelta(minutes=35)
    assert [p["state"] for p in online_client.get(payments).json()] == ["cancelled", "pending"]


@pytest.mark.parametrize(
    ("email", "mailbox"),
    [
        ("Victim@Example.com", "victim@example.com"),
        ("victim+1@example.com", "victim@example.com"),
        ('"victim"@example.com', "victim@example.com"),
        ('"victim+tickets"@example.com', "victim@example.com"),
        ("v.ictim@gmail.com", "victim@gmail.com"),
        ("V.Ic.Tim+2@googlemail.com", "victim@gmail.com"),
        ("v.ictim@example.com", "v.ictim@example.com"),  # dots count elsewhere
        ("", ""),
    ],
)
def test_an_address_counts_as_the_mailbox_it_reaches(email, mailbox):
    assert mailbox_of(email) == mailbox


def test_spellings_of_one_address_share_its_place_limits(db, day, small_limits):
    shop = UserFactory(username="shop")
    SaleLimits.objects.create(account=shop, max_held_places=100, max_places_per_day=100)
    client = client_for(shop)

    assert place(client, day, ("adult", 3), email="victim@gmail.com").status_code == 201
    for spelling in ("victim+1@gmail.com", '"victim"@gmail.com', "V.ictim@gmail.com"):
        over = place(client, day, ("adult", 1), email=spelling)
        assert over.status_code == 429 and over.json()["code"] == "too_many_held_places"


@pytest.fixture
def free_category(db):
    return VisitorCategory.objects.create(category="guest", name="Guest", general_price=0)


def test_spellings_of_one_address_share_its_emails(online_client, day, settings, free_category):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 2
    spellings = ["victim+1@gmail.com", '"victim"@gmail.com', "v.ictim@gmail.com"]

    orders = [place(online_client, day, ("guest", 1), email=e).json() for e in spellings]

    assert [o["status"] for o in orders] == ["confirmed"] * 3
    assert Order.objects.exclude(confirmation_task_id="").count() == 2


def not_placed_emails() -> int:
    return DBTaskResult.objects.filter(task_path__endswith=".send_not_placed_email").count()


def test_an_email_saying_a_payment_goes_back_counts_toward_the_limit(
    online_client, day, settings, free_category
):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 2
    paid = place(online_client, day, ("adult", 1)).json()
    payment = online_client.post(
        f"/v1.1/orders/{paid['orderId']}/payments", {"provider": "demo"}, format="json"
    ).json()
    assert online_client.post(f"/v1.1/orders/{paid['orderId']}/cancel").status_code == 200

    assert Client().post(payment["payUrl"], {"outcome": "pay"}).status_code == 302
    assert not_placed_emails() == 1  # paid after the cancellation: paid back, and told
    free = place(online_client, day, ("guest", 1), email="family+x@example.com").json()

    assert free["status"] == "confirmed"
    assert Order.objects.get(pk=free["orderId"]).confirmation_task_id  # the second email
    third = place(online_client, day, ("guest", 1)).json()
    assert not Order.objects.get(pk=third["orderId"]).confirmation_task_id


def test_free_places_are_limited_per_account_and_mailbox(
    online_client, day, settings, free_category
):
    settings.MUSEUM_MAX_FREE_PLACES_PER_DAY = 3

    assert place(online_client, day, ("guest", 2)).status_code == 201
    over = place(online_client, day, ("guest", 2), email="someone.else@example.com")
    paid = place(online_client, day, ("adult", 2), email="someone.else@example.com")

    assert (over.status_code, over.json()["code"]) == (429, "too_many_free_places")
    assert (over.json()["limit"], over.json()["limitName"]) == (3, "maxFreePlacesPerDay")
    assert paid.status_code == 201  # places with a price wait for their payment instead
    with time_machine.travel(timezone.now() + dt.timedelta(days=1, minutes=1)):
        assert place(online_client, day, ("guest", 2)).status_code == 201


def test_a_shop_gives_away_more_free_places_but_not_to_one_mailbox(
    db, day, settings, free_category
):
    settings.MUSEUM_MAX_FREE_PLACES_PER_DAY = 3
    shop = UserFactory(username="shop")
    SaleLimits.objects.create(account=shop, max_free_places_per_day=100)
    client = client_for(shop)

    assert place(client, day, ("guest", 3), email="victim@example.com").status_code == 201
    assert place(client, day, ("guest", 3), email="other@example.com").status_code == 201
    same_mailbox = place(client, day, ("guest", 1), email="Victim+2@example.com")

    assert same_mailbox.status_code == 429 and "email address" in same_mailbox.json()["detail"]
