"""The history staff read: an order's records in the admin as sentences in the museum's time, to
the second, naming tickets and slots instead of their keys; the raw record a click away for
superusers; the audit list worded the same, in a fixed number of queries."""

import datetime as dt
import re

import pytest
import time_machine
from django.urls import reverse

from audit.models import AuditRecord
from hours.models import EntrySlot
from museum.accounts import DESK_GROUP, create_account, role_group
from orders.models import Order
from tests.factories import PASSWORD, MuseumDayFactory, door_member
from tickets.services import check_in

# 12:00:05 UTC is 14:00:05 in Amsterdam, in summer.
NOW = dt.datetime(2030, 6, 3, 12, 0, 5, tzinfo=dt.UTC)


@pytest.fixture
def amsterdam(settings, db):
    settings.TIME_ZONE = "Europe/Amsterdam"
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def desk1(amsterdam):
    user = create_account(username="desk1", password=PASSWORD)
    user.is_staff = True
    user.save()
    user.groups.add(role_group(DESK_GROUP))
    return user


@pytest.fixture
def desk(amsterdam, client, desk1):
    client.force_login(desk1)  # at the travelled time: the session is fresh then
    return client


def a_timed_sale(desk, **fields) -> Order:
    day = MuseumDayFactory(date=dt.date(2030, 6, 10), opens_at=dt.time(9), closes_at=dt.time(18))
    for hour in (13, 14):
        EntrySlot.objects.create(day=day, entry_time=dt.time(hour), capacity=10)
    desk.post(
        "/desk/sell/",
        {
            "ticket_date": day.date.isoformat(),
            "entry_time": "13:00",
            "qty_adult": "1",
            "qty_child": "1",
            "payment": "cash",
            "tendered": "30",
            "sell": "",
            **fields,
        },
    )
    return Order.objects.get()


def history_of(client, order: Order) -> str:
    """The history table of the order's page in the admin."""
    page = client.get(reverse("admin:orders_order_change", args=[order.pk]))
    assert page.status_code == 200
    [table] = re.findall(r'<table class="museum-history">.*?</table>', page.content.decode(), re.S)
    return table


def test_a_move_reads_as_its_times_in_the_museums_zone_to_the_second(desk, amsterdam):
    order = a_timed_sale(desk)

    desk.post(f"/desk/orders/{order.pk}/move", {"ticket_date": "2030-06-10", "entry_time": "14:00"})

    page = history_of(desk, order)
    assert "<td>2030-06-03 14:00:05</td><td>Moved from 13:00 to 14:00 by desk1</td>" in page
    assert "Sold by desk1: 2 tickets, €22.50, paid through the desk" in page


def test_a_cancelled_ticket_names_its_code_category_and_the_cash_paid_out(desk, amsterdam):
    order = a_timed_sale(desk)
    child = order.tickets.get(category__category="child")

    desk.post(f"/desk/orders/{order.pk}/cancel", {"ticket": str(child.pk)})

    page = history_of(desk, order)
    sentence = (
        f"Ticket {child.confirmation_code} (Child (6-17)) cancelled by desk1, "
        "€7.50 paid out in cash"
    )
    assert sentence in page
    assert str(child.pk) not in page  # named, not keyed
    # One step, one row: the refund and the payout are not rows of their own.
    assert page.count("<td>2030-06-03 14:00:05</td>") == 2  # the sale, the cancellation


def test_a_check_in_shows_in_its_orders_history(desk, amsterdam):
    order = a_timed_sale(desk)
    adult = order.tickets.get(category__category="adult")

    with time_machine.travel(dt.datetime(2030, 6, 10, 11, 0, 42, tzinfo=dt.UTC), tick=False):
        check_in(scanned=adult.confirmation_code, by=door_member(username="door1"))

    page = history_of(desk, order)
    assert (
        f"<td>2030-06-10 13:00:42</td><td>Ticket {adult.confirmation_code} (Adult) checked in by "
        "door1</td>"
    ) in page


def test_the_raw_records_are_one_click_away_for_superusers_only(desk, amsterdam, admin_client):
    order = a_timed_sale(desk)
    created = AuditRecord.objects.get(object_type="orders.order", action="created")
    raw = reverse("admin:audit_auditrecord_change", args=[created.pk])

    assert raw in history_of(admin_client, order)
    assert raw not in history_of(desk, order)


def test_the_history_speaks_the_staff_members_language(desk, amsterdam):
    order = a_timed_sale(desk)
    desk.post(f"/desk/orders/{order.pk}/move", {"ticket_date": "2030-06-10", "entry_time": "14:00"})
    desk.post("/i18n/setlang/", {"language": "de"})

    assert "Verschoben von 13:00 auf 14:00 durch desk1" in history_of(desk, order)


def test_the_audit_list_words_each_record_in_a_fixed_number_of_queries(
    desk, amsterdam, admin_client, django_assert_max_num_queries
):
    order = a_timed_sale(desk)
    desk.post(f"/desk/orders/{order.pk}/move", {"ticket_date": "2030-06-10", "entry_time": "14:00"})
    for ticket in order.tickets.all():
        desk.post(f"/desk/orders/{order.pk}/cancel", {"ticket": str(ticket.pk)})

    with django_assert_max_num_queries(12):
        page = admin_client.get(reverse("admin:audit_auditrecord_changelist")).content.decode()

    assert "Moved from 13:00 to 14:00 by desk1" in page
    assert "€7.50 paid out in cash" in page
    assert "Adult" in page and "2030-06-03 14:00:05" in page


def test_other_records_read_from_their_fields_naming_related_objects(admin_client, db):
    from audit.services import record
    from audit.text import describe
    from orders.models import SaleLimits
    from tests.factories import SpecialEventFactory

    shop = create_account(username="museum-shop", password=PASSWORD)
    limits = SaleLimits.objects.create(account=shop, max_held_places=100)
    event = SpecialEventFactory(name="Lantern walk")
    made = record(
        action="created", obj=limits, changes={"account": shop.pk, "max_held_places": 100}
    )
    changed = record(
        action="changed",
        obj=event,
        changes={"price": ["12.50", "15.00"], "starts_at": [None, "19:00:00"]},
    )

    [second, first] = describe(
        AuditRecord.objects.filter(pk__in=[made.pk, changed.pk]), viewer=None
    )

    assert "created by system: account museum-shop; " in first.text
    assert second.text == (
        "Lantern walk changed by system: price from 12.50 to 15.00; starts at from – to 19:00"
    )
