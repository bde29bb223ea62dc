"""The front desk's pages, through Django's test client: a sale with cash and its change, on a
partner's account, finding, moving, resending and cancelling an order with its cash paid out."""

import datetime as dt
from decimal import Decimal

import pytest
from django.core import mail

from hours.models import EntrySlot, MuseumDay
from museum.accounts import DESK_GROUP, create_account, role_group
from orders.models import Order, OrderStatus, Refund, Ticket
from tests.conftest import run_task_worker
from tests.factories import PASSWORD, MuseumDayFactory, partner_member
from tests.orders.conftest import later


@pytest.fixture
def desk(client, db):
    """A browser session of a member of the Front desk group."""
    user = create_account(username="clerk", password=PASSWORD)
    user.is_staff = True
    user.save()
    user.groups.add(role_group(DESK_GROUP))
    client.force_login(user)
    return client


def sale(day: dt.date, **fields) -> dict:
    return {
        "ticket_date": day.isoformat(),
        "qty_adult": "2",
        "qty_child": "1",
        "payment": "cash",
        "tendered": "50",
        "sell": "",
        **fields,
    }


def test_a_cash_sale_says_the_change_and_is_paid_at_once(desk):
    day = MuseumDayFactory(date=later())

    answer = desk.post("/desk/sell/", sale(day.date), follow=True)

    order = Order.objects.get()
    assert order.status == OrderStatus.CONFIRMED and order.total == Decimal("37.50")
    assert b"Change: 12.50 EUR" in answer.content
    [payment] = order.payments.all()
    assert (payment.provider, payment.info, payment.tendered) == ("desk", "cash", 50)
    assert MuseumDay.objects.get(pk=day.pk).sold == 3


@pytest.mark.django_db(transaction=True)  # the task worker sends the email
def test_the_visitor_chooses_their_language_else_the_museums_is_theirs(desk):
    day = MuseumDayFactory(date=later())
    desk.post("/i18n/setlang/", {"language": "de"})  # the clerk's own language is not the visitor's

    form = desk.get("/desk/sell/").content.decode()
    desk.post("/desk/sell/", sale(day.date, language="nl", email="jan@example.com"))
    desk.post("/desk/sell/", sale(day.date))

    assert '<option value="nl">Nederlands</option>' in form
    assert [order.language for order in Order.objects.order_by("created_at")] == ["nl", "en"]
    run_task_worker()
    assert mail.outbox[0].subject.startswith("Uw 3 tickets voor algemene toegang op ")


def test_cash_short_of_the_total_sells_nothing(desk):
    day = MuseumDayFactory(date=later())

    answer = desk.post("/desk/sell/", sale(day.date, tendered="20"))

    assert answer.status_code == 200 and b"Less than the order" in answer.content
    assert not Order.objects.exists() and MuseumDay.objects.get(pk=day.pk).sold == 0


def test_the_desk_prices_before_it_sells(desk):
    day = MuseumDayFactory(date=later())
    fields = sale(day.date)
    del fields["sell"]

    answer = desk.post("/desk/sell/", {**fields, "price": ""})

    assert b"Total: <strong>37.50 EUR" in answer.content and not Order.objects.exists()


def test_a_sale_on_a_partners_account(desk):
    day = MuseumDayFactory(date=later())
    partner = partner_member(username="hotel")

    desk.post("/desk/sell/", sale(day.date, payment="partner", partner=str(partner.pk)))

    order = Order.objects.get()
    assert (order.buyer, order.channel, order.status) == (partner, "on_account", "confirmed")


@pytest.mark.django_db(transaction=True)  # the task worker sends the email
def test_find_move_resend_and_cancel_with_cash_paid_out(desk, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    day = MuseumDayFactory(date=later())
    slots = [EntrySlot.objects.create(day=day, entry_time=dt.time(h), capacity=5) for h in (10, 11)]
    desk.post(
        "/desk/sell/",
        sale(day.date, entry_time="10:00", email="walk@example.com", name="Ada Lovelace"),
    )
    order = Order.objects.get()

    found = desk.get("/desk/", {"q": "lovelace"})
    assert order.confirmation_code.encode() in found.content

    desk.post(f"/desk/orders/{order.pk}/move", {"ticket_date": day.date, "entry_time": "11:00"})
    assert [s.sold for s in EntrySlot.objects.filter(pk__in=[s.pk for s in slots])] == [0, 3]
    assert set(Ticket.objects.values_list("slot__entry_time", flat=True)) == {dt.time(11)}

    desk.post(f"/desk/orders/{order.pk}/resend")
    run_task_worker()
    assert [m.to for m in mail.outbox] == [["walk@example.com"]]

    cancelled = desk.post(f"/desk/orders/{order.pk}/cancel", follow=True)
    assert b"pay out 37.50 EUR" in cancelled.content
    assert set(Refund.objects.values_list("state", flat=True)) == {"done"}
    assert Order.objects.get().status == OrderStatus.CANCELLED


def test_the_desk_page_needs_the_desk_permission(client, db):
    client.force_login(create_account(username="door", password=PASSWORD, door=True))

    assert client.get("/desk/").status_code == 403


def test_today_shows_arrivals_per_slot_and_takings(desk):
    day = MuseumDayFactory(date=dt.date.today())
    EntrySlot.objects.create(day=day, entry_time=dt.time(23, 59), capacity=5)
    desk.post("/desk/sell/", sale(day.date, entry_time="23:59"))

    page = desk.get("/desk/").content.decode()

    assert "23:59" in page and "37.50 EUR" in page
