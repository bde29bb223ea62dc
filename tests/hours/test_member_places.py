"""A slot's places kept for members: out of the public's reach until their cut-off, taken by
members first, set per slot in the admin and by the weekly pattern, and exact under a race."""

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from hours.models import EntrySlot
from hours.services import member_places_released_at
from orders.exceptions import SoldOut
from orders.models import Ticket
from orders.services.sale import place_order
from tests.conftest import client_for
from tests.factories import MuseumDayFactory, partner_member
from tests.member_visits import membership

VISIT = dt.date(2030, 6, 12)
SLOT = "/admin/hours/entryslot/"


def at(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))


@pytest.fixture
def kept_slot(db):
    day = MuseumDayFactory(date=VISIT, opens_at=dt.time(10), closes_at=dt.time(17))
    return EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=4, member_places=2)


def public(slot, n: int, *, buyer=None):
    return place_order(
        buyer=buyer or partner_member(),
        email="public@example.com",
        ticket_type="general",
        ticket_date=slot.day_id,
        entry_time=slot.entry_time,
        lines=[{"category": "adult", "quantity": n}],
    )


def member_visit(slot, n: int, *, admits: int = 2, member=None):
    member = member or membership(admits=admits, valid_from=dt.date(2030, 1, 1))
    return place_order(
        buyer=member.buyer,
        email="member@example.com",
        ticket_type="general",
        ticket_date=slot.day_id,
        entry_time=slot.entry_time,
        lines=[{"category": "member", "quantity": n}],
        membership=member,
    )


def available(slot) -> int:
    client = client_for(partner_member())
    return client.get(f"/v1.1/museum-hours/{slot.day_id}/slots").json()[0]["available"]


def test_kept_places_go_on_sale_to_anyone_at_the_cut_off(kept_slot, settings):
    settings.MUSEUM_MEMBER_PLACES_RELEASE_HOURS = 24
    cut_off = member_places_released_at(kept_slot)
    assert cut_off == at(VISIT - dt.timedelta(days=1), 10)

    with time_machine.travel(cut_off - dt.timedelta(minutes=1), tick=False):
        assert available(kept_slot) == 2
        with pytest.raises(SoldOut) as refused:
            public(kept_slot, 3)
        assert refused.value.extra["available"] == 2
    with time_machine.travel(cut_off, tick=False):
        assert available(kept_slot) == 4
        public(kept_slot, 3)
        assert available(kept_slot) == 1
    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (3, 0)


def test_the_release_hours_are_a_setting(kept_slot, settings):
    settings.MUSEUM_MEMBER_PLACES_RELEASE_HOURS = 2
    with time_machine.travel(at(VISIT, 7, 59), tick=False):
        assert available(kept_slot) == 2
    with time_machine.travel(at(VISIT, 8), tick=False):
        assert available(kept_slot) == 4


def test_members_take_kept_places_first_then_the_publics(kept_slot):
    with time_machine.travel(at(VISIT - dt.timedelta(days=7), 12), tick=False):
        member_visit(kept_slot, 2, admits=3)  # both kept places
        assert available(kept_slot) == 2
        member_visit(kept_slot, 1)  # a public place: the kept ones are claimed
        assert available(kept_slot) == 1
        public(kept_slot, 1)
        with pytest.raises(SoldOut):
            member_visit(kept_slot, 1)
    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (4, 3)


def test_a_member_order_with_public_lines_claims_kept_places_for_its_members(kept_slot):
    member = membership(admits=1, valid_from=dt.date(2030, 1, 1))
    with time_machine.travel(at(VISIT - dt.timedelta(days=7), 12), tick=False):
        public(kept_slot, 1)
        # One member on a kept place, two adults on the last public places but one.
        order = place_order(
            buyer=member.buyer,
            email="member@example.com",
            ticket_type="general",
            ticket_date=VISIT,
            entry_time=kept_slot.entry_time,
            lines=[{"category": "member", "quantity": 1}, {"category": "adult", "quantity": 1}],
            membership=member,
        )
        assert order.total == 15
        assert available(kept_slot) == 0  # one kept place left, for members
    kept_slot.refresh_from_db()
    assert (kept_slot.sold, kept_slot.member_sold) == (3, 1)


def test_staff_keep_places_per_slot_never_more_than_its_capacity(kept_slot, desk_client):
    url = f"{SLOT}{kept_slot.pk}/change/"

    too_many = desk_client.post(url, {"capacity": "4", "member_places": "5"})
    assert too_many.status_code == 200
    assert "cannot keep more places for members" in too_many.content.decode()

    saved = desk_client.post(url, {"capacity": "6", "member_places": "3"})
    assert saved.status_code == 302
    kept_slot.refresh_from_db()
    assert (kept_slot.capacity, kept_slot.member_places) == (6, 3)


def test_the_weekly_pattern_keeps_member_places_in_the_slots_it_makes(db, desk_client):
    call_command(
        "seed_hours",
        *["--start", VISIT.isoformat(), "--days", "1", "--pattern", "wed 10:00-12:00"],
        *["--slot-minutes", "60", "--slot-capacity", "20", "--slot-member-places", "5"],
        stdout=StringIO(),
    )
    assert set(EntrySlot.objects.values_list("capacity", "member_places")) == {(20, 5)}

    response = desk_client.post(
        "/admin/hours/museumday/apply-pattern/",
        {
            "start": (VISIT + dt.timedelta(days=7)).isoformat(),
            "days": "1",
            "pattern": "wed 10:00-12:00",
            "slot_minutes": "60",
            "slot_capacity": "10",
            "slot_member_places": "11",
        },
    )
    assert response.status_code == 200  # refused: more kept than the slot has
    assert EntrySlot.objects.count() == 2


def test_seed_hours_refuses_more_member_places_than_slot_capacity(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="slot-member-places"):
        call_command(
            "seed_hours",
            *["--start", VISIT.isoformat(), "--days", "1", "--pattern", "wed 10:00-12:00"],
            *["--slot-minutes", "60", "--slot-capacity", "2", "--slot-member-places", "3"],
            stdout=StringIO(),
        )


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_members_and_the_public_racing_for_a_slots_last_places_keep_the_counts_exact():
    """Twelve members (one place each) and twenty public buyers race for a slot of ten places,
    four kept for members, before the cut-off: the slot fills exactly, members hold at least
    the kept four, and the public never more than the six others."""
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=7))
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(11), capacity=10, member_places=4)
    members = [membership(admits=1) for _ in range(12)]
    buyers = [partner_member() for _ in range(20)]
    jobs = [lambda m=m: member_visit(slot, 1, member=m) for m in members] + [
        lambda b=b: public(slot, 1, buyer=b) for b in buyers
    ]

    def run(job):
        try:
            job()
            return "sold"
        except SoldOut:
            return "sold_out"
        except Exception as exc:  # a deadlock or an oversold row would surface here
            return type(exc).__name__
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(run, jobs))

    assert set(outcomes) <= {"sold", "sold_out"}, outcomes
    assert outcomes.count("sold") == 10
    slot.refresh_from_db()
    valid = Ticket.objects.filter(slot=slot, cancelled_at__isnull=True)
    assert slot.sold == valid.count() == 10
    assert slot.member_sold == valid.filter(member=True).count()
    assert slot.member_sold <= slot.sold
    assert slot.member_sold >= 4  # the kept places were the members'
    assert slot.sold - slot.member_sold <= 6  # the public never took a kept place
