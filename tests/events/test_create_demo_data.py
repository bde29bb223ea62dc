import datetime as dt
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone, translation

from events.models import EventDate, SpecialEvent
from hours.models import EntrySlot
from orders.models import MembershipType, Order, Ticket
from tests.factories import SpecialEventFactory


def run(command: str, *args) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def fresh_museum(db):
    run("seed_hours", "--days", "30", "--pattern", "mon-sun 09:00-17:00")
    run("create_demo_accounts")


def test_an_empty_museum_gets_events_over_the_coming_month(fresh_museum):
    run("create_demo_data")

    today = timezone.localdate()
    dates = EventDate.objects.values_list("date", flat=True)
    assert SpecialEvent.objects.count() >= 3
    assert min(dates) == today and max(dates) <= today + dt.timedelta(days=31)
    assert not SpecialEvent.objects.filter(capacity__isnull=True).exists()


def at_today(hour: int) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(timezone.localdate(), dt.time(hour)))


def test_the_demo_visitor_gets_tickets_bought_under_the_rules(fresh_museum):
    with time_machine.travel(at_today(10), tick=False):
        output = run("create_demo_data")

    tickets = Ticket.objects.filter(buyer__username="visitor")
    assert {ticket.ticket_type for ticket in tickets} == {"event", "general"}
    assert tickets.filter(date=timezone.localdate()).exists()  # something to scan at the door
    sold = sum(EventDate.objects.values_list("sold", flat=True))
    assert sold == tickets.filter(ticket_type="event").count()
    assert all(ticket.confirmation_code in output for ticket in tickets)


def test_after_closing_time_the_late_opening_is_bought_for_its_next_date(fresh_museum):
    """Today's event tickets are no longer sold once the museum has closed (17:00 here):
    `make run` late in the day still fills the museum."""
    with time_machine.travel(at_today(18), tick=False):
        run("create_demo_data")

    late = Ticket.objects.get(buyer__username="visitor", event__name__startswith="Late Opening")
    assert late.date == timezone.localdate() + dt.timedelta(days=7)


def test_running_it_again_adds_nothing(fresh_museum):
    run("create_demo_data")
    counts = (SpecialEvent.objects.count(), Ticket.objects.count())

    output = run("create_demo_data")

    assert (SpecialEvent.objects.count(), Ticket.objects.count()) == counts
    assert "no demo data added" in output


def test_a_museum_with_any_event_is_left_alone(fresh_museum):
    SpecialEventFactory(name="The real programme")

    run("create_demo_data")

    assert list(SpecialEvent.objects.values_list("name", flat=True)) == ["The real programme"]
    assert not Ticket.objects.exists()


def test_without_open_days_only_event_tickets_are_bought(db):
    run("create_demo_accounts")

    output = run("create_demo_data")

    assert set(Ticket.objects.values_list("ticket_type", flat=True)) == {"event"}
    assert "No open days" in output


def test_an_open_day_two_days_away_is_timed_with_the_visitors_family_order_in_a_slot(
    fresh_museum,
):
    output = run("create_demo_data")

    order = Order.objects.get(buyer__username="visitor", slot__isnull=False)
    assert order.date == timezone.localdate() + dt.timedelta(2)  # every day is open here
    assert order.slot is not None and order.slot.entry_time == dt.time(10, 30)
    assert sorted(order.tickets.values_list("category__category", flat=True)) == [
        "adult",
        "adult",
        "child",
        "child",
    ]
    assert EntrySlot.objects.filter(day_id=order.date).count() == 16  # 09:00 to 16:30
    assert order.slot.sold == 4
    assert order.confirmation_code in output


def test_members_get_types_in_each_language_and_places_kept_in_the_morning_slots(fresh_museum):
    output = run("create_demo_data")

    kinds = MembershipType.objects.all()
    assert [(kind.code, kind.admits) for kind in kinds] == [
        ("individual", 1),
        ("dual", 2),
        ("family", 6),
    ]
    with translation.override("fr"):
        assert kinds.get(code="family").name == "Famille"
    kept = EntrySlot.objects.filter(member_places__gt=0).values_list("entry_time", flat=True)
    assert sorted(kept) == [dt.time(10), dt.time(10, 30), dt.time(11), dt.time(11, 30), dt.time(12)]
    assert "places kept for members in 5 slots" in output


def test_a_museums_own_membership_type_is_kept(fresh_museum):
    MembershipType.objects.create(code="family", name="Household", price=200, admits=5)

    run("create_demo_data")

    assert MembershipType.objects.get(code="family").name == "Household"
    assert MembershipType.objects.count() == 3
