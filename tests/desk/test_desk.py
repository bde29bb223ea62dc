"""The front desk's pages, through Django's test client: a sale with cash and its change, on a
partner's account, finding, moving, resending and cancelling an order with its cash paid out."""

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.core import mail
from django.utils import timezone

from events.models import EventDate
from hours.models import EntrySlot, MuseumDay
from museum.accounts import DESK_GROUP, create_account, role_group
from orders.models import Order, OrderStatus, Refund, Ticket
from tests.conftest import run_task_worker
from tests.factories import PASSWORD, MuseumDayFactory, SpecialEventFactory, partner_member
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
    assert "Change to give: €12.50" in answer.content.decode()
    assert "Paid at the desk (cash)" in answer.content.decode()
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

    assert answer.status_code == 200 and b"Less than what is due" in answer.content
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
    assert found.url == f"/desk/orders/{order.pk}/"  # a single hit opens the order

    desk.post(f"/desk/orders/{order.pk}/move", {"ticket_date": day.date, "entry_time": "11:00"})
    assert [s.sold for s in EntrySlot.objects.filter(pk__in=[s.pk for s in slots])] == [0, 3]
    assert set(Ticket.objects.values_list("slot__entry_time", flat=True)) == {dt.time(11)}

    desk.post(f"/desk/orders/{order.pk}/resend")
    run_task_worker()
    assert [m.to for m in mail.outbox] == [["walk@example.com"]]

    cancelled = desk.post(f"/desk/orders/{order.pk}/cancel", follow=True)
    assert "Pay out €37.50 in cash" in cancelled.content.decode()
    assert set(Refund.objects.values_list("state", flat=True)) == {"done"}
    assert Order.objects.get().status == OrderStatus.CANCELLED


def test_the_desk_page_needs_the_desk_permission(client, db):
    client.force_login(create_account(username="door", password=PASSWORD, door=True))

    assert client.get("/desk/").status_code == 403
    assert client.get("/desk/slots/", {"ticket_date": "2030-01-01"}).status_code == 403


def test_today_shows_arrivals_per_slot_and_takings(desk):
    day = MuseumDayFactory(date=dt.date.today())
    EntrySlot.objects.create(day=day, entry_time=dt.time(23, 59), capacity=5)
    desk.post("/desk/sell/", sale(day.date, entry_time="23:59"))

    page = desk.get("/desk/").content.decode()

    assert "23:59" in page and "37.50 EUR" in page


def test_the_desk_finds_an_order_by_a_messy_code_and_opens_it(desk):
    day = MuseumDayFactory(date=later())
    desk.post("/desk/sell/", sale(day.date))
    desk.post("/desk/sell/", sale(day.date))
    first, _second = Order.objects.order_by("created_at")
    Order.objects.filter(pk=first.pk).update(confirmation_code="order-01x2y3-z4910")
    ticket = first.tickets.order_by("confirmation_code").first()
    Ticket.objects.filter(pk=ticket.pk).update(confirmation_code="ticket-general-5k1m0q-r7t0v")

    for messy in ("  ORDER O1X2Y3 Z49IO ", "01x2y3z49l0", "5K1M0Q R7TOV", "ticket 5k1mOq-r7t0v"):
        found = desk.get("/desk/", {"q": messy})
        assert found.status_code == 302 and found.url == f"/desk/orders/{first.pk}/", messy


def test_the_sale_shows_the_days_slots_with_places_left_and_the_next_with_room_chosen(
    desk, time_machine
):
    # Today at 10:30 (the session stays valid: no later than it began, give or take a day).
    day = MuseumDayFactory(date=timezone.localdate())
    for hour, capacity, sold in ((9, 10, 0), (10, 4, 4), (11, 6, 2), (12, None, 0)):
        EntrySlot.objects.create(day=day, entry_time=dt.time(hour), capacity=capacity, sold=sold)
    now = timezone.make_aware(dt.datetime.combine(day.date, dt.time(10, 30)))
    time_machine.move_to(now, tick=False)

    page = desk.get("/desk/slots/", {"ticket_date": day.date.isoformat()}).content.decode()

    def slot(time: str) -> str:
        return re.search(rf'<label class="choice[^"]*">\s*<input [^>]*value="{time}"[^>]*>', page)[
            0
        ]

    assert "disabled" in slot("09:00") and "past" in page  # its sale ended when 10:00 began
    assert "disabled" in slot("10:00") and "sold out" in page
    assert "checked" in slot("11:00") and "4 places left" in page
    assert "disabled" not in slot("12:00") and "checked" not in slot("12:00")


def test_an_untimed_or_closed_day_says_so_and_an_event_lists_its_dates(desk):
    untimed = MuseumDayFactory(date=later(), capacity=50)
    closed = MuseumDayFactory(date=later() + dt.timedelta(days=1), is_closed=True)
    event = SpecialEventFactory(name="Lantern walk", dates=[later()])
    EventDate.objects.filter(event=event).update(capacity=30, sold=4)

    def picker(**query) -> str:
        return desk.get("/desk/slots/", query).content.decode()

    assert "No entry slots on this day" in picker(ticket_date=untimed.date.isoformat())
    assert "50 places left" in picker(ticket_date=untimed.date.isoformat())
    assert "closed on this day" in picker(ticket_date=closed.date.isoformat())
    dates = picker(ticket_date=untimed.date.isoformat(), event=str(event.pk))
    assert f'data-date="{later().isoformat()}"' in dates and "26 places left" in dates


def test_today_lists_every_slot_of_the_day_sold_or_not(desk):
    day = MuseumDayFactory(date=dt.date.today())
    for hour in (10, 23):
        EntrySlot.objects.create(day=day, entry_time=dt.time(hour), capacity=5)

    page = desk.get("/desk/").content.decode()

    rows = re.findall(r"<tr><td>(\d\d:\d\d)</td><td>(\d+)</td><td>(\d+)</td>", page)
    assert rows == [("10:00", "5", "0"), ("23:00", "5", "0")]


def test_cancelling_asks_first_naming_the_tickets_and_the_amount_back(desk):
    day = MuseumDayFactory(date=later())
    desk.post("/desk/sell/", sale(day.date))
    order = Order.objects.get()
    child = order.tickets.get(category__category="child")

    asked = desk.get(f"/desk/orders/{order.pk}/cancel/confirm", {"ticket": child.pk})

    page = asked.content.decode()
    assert f"Cancel ticket {child.confirmation_code}?" in page
    assert "Goes back to the visitor: €7.50 in cash" in page
    assert not Ticket.objects.filter(cancelled_at__isnull=False).exists()
    whole = desk.get(f"/desk/orders/{order.pk}/cancel/confirm").content.decode()
    assert "with its 3 tickets?" in whole and "€37.50 in cash" in whole


def test_a_checked_in_ticket_is_cancelled_only_when_the_clerk_says_so(desk):
    day = MuseumDayFactory(date=later())
    desk.post("/desk/sell/", sale(day.date))
    order = Order.objects.get()
    child = order.tickets.get(category__category="child")
    Ticket.objects.filter(pk=child.pk).update(checked_in_at=timezone.now())
    url = f"/desk/orders/{order.pk}/cancel"

    asked = desk.get(f"{url}/confirm", {"ticket": child.pk}).content.decode()
    refused = desk.post(url, {"ticket": child.pk}, follow=True).content.decode()
    assert 'name="even_if_checked_in"' in asked and "Cancel although checked in" in asked
    assert "cannot be cancelled" in refused and not Refund.objects.exists()

    done = desk.post(url, {"ticket": child.pk, "even_if_checked_in": "yes"}, follow=True)

    assert 'class="payout success"' in done.content.decode()
    assert "Pay out €7.50 in cash" in done.content.decode()
    assert Ticket.objects.get(pk=child.pk).cancelled_at is not None


def test_a_missing_slot_is_told_in_a_clerks_words(desk):
    day = MuseumDayFactory(date=later())
    EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=5)

    answer = desk.post("/desk/sell/", sale(day.date)).content.decode()

    assert "The museum sells timed entry on that day: name a slot." in answer
    assert "entryTime" not in answer
