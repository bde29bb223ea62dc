"""Staff see orders, refunds, slots and the sales summary in the admin, and cancel there."""

import csv
import datetime as dt
import io
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.db import IntegrityError, transaction
from django.utils import timezone

from hours.models import EntrySlot
from hours.services import CapacityBelowSold, set_slot_capacity
from orders.models import Order, Refund, VisitorCategory
from orders.services.cancellation import cancel_order
from orders.services.holds import confirm_order
from orders.services.sale import place_order
from tests.factories import MuseumDayFactory, SpecialEventFactory, UserFactory, partner_member
from tests.orders.conftest import later

ORDERS = "/admin/orders/order/"


def an_order(day, *lines, hold=False, entry_time=None, email="family@example.com", **event):
    return place_order(
        buyer=partner_member(),
        email=email,
        ticket_type=event.pop("ticket_type", "general"),
        ticket_date=day,
        **event,
        entry_time=entry_time,
        lines=[{"category": code, "quantity": n} for code, n in lines],
        hold=hold,
    )


def test_staff_find_orders_by_code_and_email_and_filter_by_status(desk_client):
    day = MuseumDayFactory(date=later()).date
    family = an_order(day, ("adult", 2), email="family@example.com")
    other = an_order(day, ("adult", 1), hold=True, email="other@example.com")

    by_code = desk_client.get(ORDERS, {"q": family.confirmation_code}).content.decode()
    by_email = desk_client.get(ORDERS, {"q": "other@example.com"}).content.decode()
    held = desk_client.get(ORDERS, {"status__exact": "held"}).content.decode()

    assert family.confirmation_code in by_code and other.confirmation_code not in by_code
    assert other.confirmation_code in by_email and family.confirmation_code not in by_email
    assert other.confirmation_code in held and family.confirmation_code not in held


def test_an_orders_page_shows_its_tickets_and_refunds(desk_client):
    order = an_order(MuseumDayFactory(date=later()).date, ("adult", 1), ("child", 1))
    ticket = order.sold_tickets[0]
    desk_client.post(ORDERS, {"action": "cancel_selected_orders", "_selected_action": [order.pk]})

    page = desk_client.get(f"{ORDERS}{order.pk}/change/").content.decode()

    assert ticket.confirmation_code in page
    assert Refund.objects.filter(order=order).count() == 2
    assert "Refunds" in page or "refund" in page.lower()
    assert Order.objects.get(pk=order.pk).status == "cancelled"


def test_cancelling_in_the_admin_needs_the_cancel_permission(client):
    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_order"))
    client.force_login(viewer)
    order = an_order(MuseumDayFactory(date=later()).date, ("adult", 1))

    client.post(ORDERS, {"action": "cancel_selected_orders", "_selected_action": [order.pk]})

    assert Order.objects.get(pk=order.pk).status == "confirmed"


def test_the_sales_summary_counts_each_day_and_category(desk_client):
    day = MuseumDayFactory(date=later()).date
    an_order(day, ("adult", 2), ("child", 1))
    an_order(day, ("adult", 1), hold=True)  # not paid: not a sale

    page = desk_client.get(f"{ORDERS}sales/").content.decode()

    assert "<td>Adult</td><td>2</td><td>30.00</td>" in page
    assert "<td>Child (6-17)</td><td>1</td><td>7.50</td>" in page


def test_a_visitor_sees_no_sales(client):
    client.force_login(UserFactory(username="nosy", is_staff=True))

    assert client.get(f"{ORDERS}sales/").status_code == 403


def test_a_days_slots_show_sold_and_held_against_capacity(desk_client):
    day = MuseumDayFactory(date=later(), opens_at=dt.time(10), closes_at=dt.time(12))
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10, 30), capacity=40)
    an_order(day.date, ("adult", 2), entry_time=slot.entry_time)
    an_order(day.date, ("adult", 1), hold=True, entry_time=slot.entry_time)

    day_page = desk_client.get(f"/admin/hours/museumday/{day.date}/change/").content.decode()
    slot_list = desk_client.get("/admin/hours/entryslot/").content.decode()

    assert "3 (1 held) / 40" in day_page
    assert "3 (1 held) / 40" in slot_list


def test_a_slots_capacity_cannot_go_below_its_sold_places(desk_client):
    day = MuseumDayFactory(date=later())
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=40)
    an_order(day.date, ("adult", 3), entry_time=slot.entry_time)

    answer = desk_client.post(f"/admin/hours/entryslot/{slot.pk}/change/", {"capacity": "2"})

    assert answer.status_code == 200 and "3 places of this slot" in answer.content.decode()
    slot.refresh_from_db()
    assert slot.capacity == 40


def test_a_slots_capacity_changes_through_the_service_which_refuses_a_sold_place(db):
    day = MuseumDayFactory(date=later())
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=40)
    an_order(day.date, ("adult", 3), entry_time=slot.entry_time)

    set_slot_capacity(slot_id=slot.pk, capacity=3)
    with pytest.raises(CapacityBelowSold):
        set_slot_capacity(slot_id=slot.pk, capacity=2)

    slot.refresh_from_db()
    assert slot.capacity == 3


def test_staff_change_a_slots_capacity_in_the_admin(desk_client):
    slot = EntrySlot.objects.create(day=MuseumDayFactory(date=later()), entry_time=dt.time(10))

    desk_client.post(f"/admin/hours/entryslot/{slot.pk}/change/", {"capacity": "25"})

    slot.refresh_from_db()
    assert slot.capacity == 25


def test_staff_see_the_orders_whose_email_is_still_waiting(desk_client):
    waiting = an_order(MuseumDayFactory(date=later()).date, ("adult", 1), email="w@example.com")
    sent = an_order(MuseumDayFactory(date=later(4)).date, ("adult", 1), email="s@example.com")
    Order.objects.filter(pk=sent.pk).update(confirmation_sent_at=timezone.now())

    page = desk_client.get(ORDERS, {"confirmation_sent_at__isempty": "1"}).content.decode()

    assert waiting.confirmation_code in page and sent.confirmation_code not in page


def test_the_sales_report_counts_no_hold_as_a_sale_or_a_cancellation(desk_client):
    day = MuseumDayFactory(date=later()).date
    event = SpecialEventFactory(name="Night tour", price=Decimal("20"), dates=[day])
    paid = an_order(day, ("adult", 2), ("child", 1))
    an_order(day, ("adult", 1), ticket_type="event", event_id=event.pk)
    cancel_order(order_id=paid.pk, by=paid.buyer, ticket_id=paid.sold_tickets[2].pk)
    held = an_order(day, ("adult", 4), hold=True)
    cancel_order(order_id=held.pk, by=held.buyer)  # a hold let go: no sale, no cancel
    partly = an_order(day, ("adult", 1), ("student", 1), hold=True)
    cancel_order(order_id=partly.pk, by=partly.buyer, ticket_id=partly.sold_tickets[1].pk)
    confirm_order(order_id=partly.pk, by=partly.buyer)  # its student was never sold

    exported = desk_client.get(f"{ORDERS}sales/", {"format": "csv"}).content.decode()

    rows = list(csv.reader(io.StringIO(exported)))
    sales = rows[rows.index(["Sales per day, visit and category"]) + 2 :][:4]
    assert [row[1:] for row in sales] == [
        ["General entry", "Adult", "3", "45.00", "0", "0.00", "45.00"],
        ["General entry", "Child (6-17)", "1", "7.50", "1", "7.50", "0.00"],
        ["Night tour", "Adult", "1", "20.00", "0", "0.00", "20.00"],
        ["", "", "5", "72.50", "1", "7.50", "65.00"],
    ]


def test_no_visitor_category_may_take_the_code_of_a_members_place(admin_client):
    # An order's "member" line is a member's free place: a category of that code would never
    # be sold, so the admin refuses it with a reason, and the database refuses it too.
    form = {
        "category": "member",
        "name_en": "Member",
        "general_price": "0",
        "tax_rate": "0",
        "event_price_percent": "100",
        "ordering": "0",
        "active": "on",
    }

    answer = admin_client.post("/admin/orders/visitorcategory/add/", form)

    assert answer.status_code == 200
    assert "names a member&#x27;s free place" in answer.content.decode()
    assert not VisitorCategory.objects.filter(category="member").exists()
    with pytest.raises(IntegrityError), transaction.atomic():
        VisitorCategory.objects.create(category="member", name="Member", general_price=0)
    form["category"] = "members"
    assert admin_client.post("/admin/orders/visitorcategory/add/", form).status_code == 302
