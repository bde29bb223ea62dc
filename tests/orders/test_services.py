"""The order rules, called as the API and the admin call them."""

import datetime as dt
import uuid
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from events.models import EventDate, SpecialEvent
from hours.models import EntrySlot, MuseumDay
from museum.exceptions import InvalidInput, NotFound
from orders import selectors
from orders.exceptions import CheckedIn, EventNotOnDate, SoldOut, TooLate, UnknownEvent
from orders.models import Order, OrderStatus, Refund, Ticket, TicketImage, VisitorCategory
from orders.services.cancellation import cancel_order
from orders.services.holds import confirm_order, release_expired_holds
from orders.services.pricing import category_price
from orders.services.sale import buy_ticket, place_order
from tests.factories import (
    MuseumDayFactory,
    SpecialEventFactory,
    UserFactory,
    partner_member,
    staff_member,
)
from tests.orders.conftest import later
from tickets.images import ticket_image


def order(day, *lines, buyer=None, hold=False, **extra):
    return place_order(
        buyer=buyer or partner_member(),
        email="a@example.com",
        ticket_type=extra.pop("ticket_type", "general"),
        ticket_date=day,
        lines=[{"category": code, "quantity": n} for code, n in lines or [("adult", 1)]],
        hold=hold,
        **extra,
    )


@pytest.mark.parametrize(
    ("price", "percent", "expected"),
    [("45.00", 50, "22.50"), ("9.99", 50, "5.00"), ("12.50", 80, "10.00"), ("10", 0, "0.00")],
)
def test_an_event_share_is_rounded_to_the_cent(db, price, percent, expected):
    category = VisitorCategory(general_price=Decimal("1"), event_price_percent=percent)
    event = SpecialEvent(price=Decimal(price))

    assert category_price(category=category, event=event) == Decimal(expected)


def test_a_ticket_keeps_the_price_it_was_sold_at(db):
    day = MuseumDayFactory(date=later()).date
    sold = order(day, ("child", 1)).sold_tickets[0]

    VisitorCategory.objects.filter(category="child").update(general_price=Decimal("9.00"))

    sold.refresh_from_db()
    assert sold.price == Decimal("7.50")


def test_event_orders_check_the_event_and_its_date(db):
    event = SpecialEventFactory(dates=[later()], capacity=None)
    EventDate.objects.filter(event=event).update(capacity=2)

    with pytest.raises(UnknownEvent):
        order(later(), ticket_type="event", event_id=uuid.uuid4())
    with pytest.raises(EventNotOnDate):
        order(later(4), ticket_type="event", event_id=event.pk)
    with pytest.raises(SoldOut):
        order(later(), ("adult", 3), ticket_type="event", event_id=event.pk)
    assert order(later(), ("adult", 2), ticket_type="event", event_id=event.pk).total == 25
    assert EventDate.objects.get(event=event).sold == 2


def test_releasing_holds_touches_only_those_that_ran_out(db):
    day = MuseumDayFactory(date=later()).date
    with time_machine.travel(timezone.now() - dt.timedelta(minutes=11), tick=False):
        old = order(day, ("adult", 2), hold=True)
    fresh = order(day, ("adult", 1), hold=True)

    assert release_expired_holds() == 1
    assert release_expired_holds() == 0  # nothing left to do

    assert Order.objects.get(pk=old.pk).status == OrderStatus.EXPIRED
    assert Order.objects.get(pk=fresh.pk).status == OrderStatus.HELD
    assert MuseumDay.objects.get(date=day).sold == 1


def test_a_confirmation_retried_changes_nothing(db):
    held = order(MuseumDayFactory(date=later()).date, hold=True)
    first = confirm_order(order_id=held.pk, by=held.buyer)

    again = confirm_order(order_id=held.pk, by=held.buyer)

    assert again.status == first.status == OrderStatus.CONFIRMED
    assert again.confirmed_at == first.confirmed_at


def test_cancelling_a_held_order_owes_no_refund(db):
    held = order(MuseumDayFactory(date=later()).date, ("adult", 2), hold=True)

    cancelled = cancel_order(order_id=held.pk, by=held.buyer)

    assert cancelled.status == OrderStatus.CANCELLED
    assert not Refund.objects.exists()


def test_staff_cancel_after_the_deadline_and_are_recorded_as_cancelling(db):
    day = MuseumDayFactory(date=timezone.localdate())
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(23, 59), capacity=10)
    sold = order(day.date, ("adult", 1), entry_time=slot.entry_time)
    staff = staff_member(username="staff")

    with pytest.raises(TooLate):
        cancel_order(order_id=sold.pk, by=sold.buyer)
    cancel_order(order_id=sold.pk, by=staff)

    assert Refund.objects.get().cancelled_by == staff
    assert EntrySlot.objects.get(pk=slot.pk).sold == 0


def test_nobody_else_sees_or_changes_an_order(db):
    sold = order(MuseumDayFactory(date=later()).date)
    stranger = UserFactory(username="stranger")

    for attempt in (
        lambda: selectors.viewable_order(order_id=sold.pk, viewer=stranger),
        lambda: cancel_order(order_id=sold.pk, by=stranger),
        lambda: confirm_order(order_id=sold.pk, by=stranger),
    ):
        with pytest.raises(NotFound):
            attempt()


def test_a_ticket_of_another_order_is_not_found(db):
    day = MuseumDayFactory(date=later()).date
    mine, theirs = order(day), order(day)

    with pytest.raises(NotFound):
        cancel_order(order_id=mine.pk, by=mine.buyer, ticket_id=theirs.sold_tickets[0].pk)


def test_the_contract_purchase_pays_the_events_own_price(db):
    event = SpecialEventFactory(price=Decimal("45"), dates=[later()])

    sold = buy_ticket(
        buyer=partner_member(),
        email="a@example.com",
        ticket_type="event",
        ticket_date=later(),
        event_id=event.pk,
    )

    assert sold.order.total == Decimal("45") and sold.category.category == "adult"


def test_the_contract_purchase_on_a_full_timed_day_releases_expired_holds(db):
    day = MuseumDayFactory(date=later())
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=2)
    with time_machine.travel(timezone.now() - dt.timedelta(minutes=11), tick=False):
        order(day.date, ("adult", 2), hold=True, entry_time=slot.entry_time)

    sold = buy_ticket(
        buyer=partner_member(), email="a@example.com", ticket_type="general", ticket_date=day.date
    )

    assert sold.slot == slot
    assert EntrySlot.objects.get(pk=slot.pk).sold == 1


def test_quantities_beyond_the_limit_are_refused_before_anything_is_taken(db, settings):
    settings.MUSEUM_MAX_TICKETS_PER_ORDER = 4
    day = MuseumDayFactory(date=later())

    with pytest.raises(InvalidInput):
        order(day.date, ("adult", 3), ("child", 2))
    assert MuseumDay.objects.get(pk=day.pk).sold == 0


def test_an_event_called_off_cancels_its_orders_and_refunds_the_paid_tickets(
    staff_client, visitor_client
):
    event = SpecialEventFactory(price=Decimal("20"), dates=[later()])
    paid = order(later(), ("adult", 1), ("child", 1), ticket_type="event", event_id=event.pk)
    held = order(later(), ("adult", 1), ticket_type="event", event_id=event.pk, hold=True)
    cancel_order(order_id=paid.pk, by=paid.buyer, ticket_id=paid.sold_tickets[1].pk)

    assert staff_client.delete(f"/v1.1/special-events/{event.pk}").status_code == 204

    assert Order.objects.get(pk=paid.pk).status == OrderStatus.CANCELLED
    assert Order.objects.get(pk=held.pk).status == OrderStatus.CANCELLED
    refunds = {
        (refund.ticket_id, refund.amount, refund.cancelled_by_id) for refund in Refund.objects.all()
    }
    assert refunds == {
        (paid.sold_tickets[1].pk, paid.sold_tickets[1].price, paid.buyer.pk),
        (paid.sold_tickets[0].pk, paid.sold_tickets[0].price, None),
    }


def test_the_contract_purchase_on_a_full_timed_day_frees_the_days_expired_holds(db):
    day = MuseumDayFactory(date=later(), capacity=2)
    slots = [
        EntrySlot.objects.create(day=day, entry_time=dt.time(hour), capacity=10)
        for hour in (10, 11)
    ]
    with time_machine.travel(timezone.now() - dt.timedelta(minutes=11), tick=False):
        order(day.date, ("adult", 2), hold=True, entry_time=slots[1].entry_time)

    sold = buy_ticket(
        buyer=partner_member(), email="a@example.com", ticket_type="general", ticket_date=day.date
    )

    assert sold.slot == slots[0]
    assert MuseumDay.objects.get(pk=day.pk).sold == 1


def test_the_contract_purchase_on_a_full_timed_day_is_sold_out(db):
    day = MuseumDayFactory(date=later(), capacity=1)
    EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=10)
    buy_ticket(
        buyer=partner_member(), email="a@example.com", ticket_type="general", ticket_date=day.date
    )

    with pytest.raises(SoldOut):
        buy_ticket(
            buyer=partner_member(),
            email="a@example.com",
            ticket_type="general",
            ticket_date=day.date,
        )
    assert EntrySlot.objects.get().sold == 1


def test_a_checked_in_ticket_is_not_cancelled_unless_staff_say_so_which_is_recorded(db):
    sold = order(MuseumDayFactory(date=later()).date, ("adult", 2))
    used = sold.sold_tickets[0]
    Ticket.objects.filter(pk=used.pk).update(checked_in_at=timezone.now())
    staff = staff_member()

    with pytest.raises(CheckedIn):
        cancel_order(order_id=sold.pk, by=sold.buyer, ticket_id=used.pk)
    with pytest.raises(CheckedIn):  # staff too, unless they say so
        cancel_order(order_id=sold.pk, by=staff, ticket_id=used.pk)
    with pytest.raises(CheckedIn):  # and saying so is for staff only
        cancel_order(order_id=sold.pk, by=sold.buyer, ticket_id=used.pk, even_if_checked_in=True)
    cancel_order(order_id=sold.pk, by=staff, ticket_id=used.pk, even_if_checked_in=True)

    used.refresh_from_db()
    assert used.cancelled_at is not None and used.cancelled_by == staff
    assert Refund.objects.get().ticket_id == used.pk


def test_a_held_order_with_a_ticket_cancelled_costs_what_it_still_holds(db):
    held = order(MuseumDayFactory(date=later()).date, ("adult", 1), ("child", 1), hold=True)
    child = next(t for t in held.sold_tickets if t.category.category == "child")

    after = cancel_order(order_id=held.pk, by=held.buyer, ticket_id=child.pk)

    assert after.status == OrderStatus.HELD and after.total == Decimal("15.00")
    assert Order.objects.get(pk=held.pk).total == Decimal("15.00")
    assert not Refund.objects.exists()  # nothing was paid


def test_an_expired_hold_voids_its_tickets_images(db):
    day = MuseumDayFactory(date=later()).date
    with time_machine.travel(timezone.now() - dt.timedelta(minutes=11), tick=False):
        held = order(day, ("adult", 1), hold=True)
        ticket_image(ticket=held.sold_tickets[0])  # drawn while held
    assert TicketImage.objects.exists()

    assert release_expired_holds() == 1

    assert not TicketImage.objects.exists()  # drawn again on its next fetch, stamped CANCELLED
