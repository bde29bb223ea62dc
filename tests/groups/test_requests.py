"""A group's request holds its places at once, in the sale's own count: a second request finds
them taken, one unanswered in time gives them back; staff decline it or offer another time."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from audit.models import Action, AuditRecord
from groups.exceptions import GroupRequestAnswered, GroupTooLarge, TooManyGroupRequests
from groups.models import GroupRequest, GroupStatus
from groups.services import pricing, requests
from hours.models import MuseumDay
from museum.exceptions import InvalidInput
from orders.exceptions import SoldOut
from tests.factories import MuseumDayFactory, staff_member
from tests.groups.conftest import ahead, school
from tests.live_http import in_parallel


def sold(day) -> int:
    return MuseumDay.objects.get(pk=day.pk).sold


def test_a_request_for_28_pupils_and_3_teachers_holds_31_places_at_once(pupil, teacher, group_day):
    before = timezone.now()

    group = requests.request_group(account=None, **school(group_day.date))

    assert (group.status, group.places, sold(group_day)) == (GroupStatus.REQUESTED, 31, 31)
    assert group.headcount == 31 and group.code.startswith("group-")
    assert (
        before + dt.timedelta(days=7) <= group.expires_at <= timezone.now() + dt.timedelta(days=7)
    )
    assert AuditRecord.objects.filter(action=Action.CREATED, object_id=str(group.pk)).exists()


def test_a_second_request_is_refused_for_lack_of_room(pupil, teacher, group_day):
    requests.request_group(account=None, **school(group_day.date))

    with pytest.raises(SoldOut) as refused:
        requests.request_group(
            account=None, **school(group_day.date, email="b@other.example", lines={"pupil": 10})
        )

    assert refused.value.extra["available"] == 9
    assert sold(group_day) == 31 and GroupRequest.objects.count() == 1


def test_an_unanswered_request_expires_and_gives_its_places_back(pupil, teacher, group_day):
    group = requests.request_group(account=None, **school(group_day.date))
    GroupRequest.objects.filter(pk=group.pk).update(expires_at=timezone.now())

    assert requests.expire_requests() == 1

    group.refresh_from_db()
    assert (group.status, group.places, sold(group_day)) == (GroupStatus.EXPIRED, 0, 0)
    assert AuditRecord.objects.filter(action=Action.EXPIRED, object_id=str(group.pk)).exists()
    assert requests.expire_requests() == 0  # once


def test_a_request_run_out_but_not_swept_never_blocks_the_next(pupil, teacher, group_day):
    first = requests.request_group(account=None, **school(group_day.date))
    GroupRequest.objects.filter(pk=first.pk).update(expires_at=timezone.now())

    second = requests.request_group(
        account=None, **school(group_day.date, email="b@other.example", lines={"pupil": 20})
    )

    assert GroupRequest.objects.get(pk=first.pk).status == GroupStatus.EXPIRED
    assert second.places == 20 and sold(group_day) == 20


def test_declining_gives_the_places_back_and_says_why(pupil, teacher, group_day):
    group = requests.request_group(account=None, **school(group_day.date))

    declined = requests.decline(request_id=group.pk, by=staff_member(), reason="Closed for works")

    assert (declined.status, declined.message, sold(group_day)) == (
        GroupStatus.DECLINED,
        "Closed for works",
        0,
    )
    with pytest.raises(GroupRequestAnswered):
        requests.decline(request_id=group.pk, by=staff_member(username="b"), reason="again")


def test_another_time_offered_moves_the_places_and_the_group_accepts_it(pupil, teacher, group_day):
    other = MuseumDayFactory(date=ahead(31), capacity=40)
    group = requests.request_group(account=None, **school(group_day.date))

    offered = requests.offer_time(request_id=group.pk, by=staff_member(), date=other.date)

    assert (offered.status, offered.date, sold(group_day), sold(other)) == (
        GroupStatus.OFFERED,
        other.date,
        0,
        31,
    )
    accepted = requests.accept_offer(request_id=group.pk)
    assert accepted.status == GroupStatus.REQUESTED


def test_an_offer_where_there_is_no_room_leaves_the_places_where_they_were(
    pupil, teacher, group_day
):
    small = MuseumDayFactory(date=ahead(31), capacity=10)
    group = requests.request_group(account=None, **school(group_day.date))

    with pytest.raises(SoldOut):
        requests.offer_time(request_id=group.pk, by=staff_member(), date=small.date)

    assert (sold(group_day), sold(small)) == (31, 0)
    assert GroupRequest.objects.get(pk=group.pk).status == GroupStatus.REQUESTED


def test_a_mailbox_has_at_most_three_requests_waiting(pupil, teacher, db, settings):
    settings.MUSEUM_GROUP_OPEN_REQUESTS = 3
    for days in (20, 21, 22):
        MuseumDayFactory(date=ahead(days))
        requests.request_group(account=None, **school(ahead(days), lines={"pupil": 5}))
    MuseumDayFactory(date=ahead(23))

    with pytest.raises(TooManyGroupRequests):
        # Another spelling of the same mailbox counts alike.
        requests.request_group(
            account=None,
            **school(ahead(23), email="Weber+x@Schiller.example", lines={"pupil": 5}),
        )


def test_a_group_larger_than_the_museum_takes_is_refused(pupil, group_day, settings):
    settings.MUSEUM_GROUP_MAX_PEOPLE = 200

    with pytest.raises(GroupTooLarge):
        requests.request_group(account=None, **school(group_day.date, lines={"pupil": 201}))

    assert sold(group_day) == 0


@pytest.mark.parametrize("lines", [{}, {"pupil": -1}, {"nobody": 3}])
def test_lines_must_name_people_of_known_categories(pupil, group_day, lines):
    with pytest.raises(InvalidInput):
        requests.request_group(account=None, **school(group_day.date, lines=lines))


def test_the_chaperone_rule_1_free_adult_per_10_pupils(pupil, teacher, chaperones):
    all_free = pricing.price_group({pupil: 28, teacher: 3}, tour=None)
    two_paid = pricing.price_group({pupil: 28, teacher: 5}, tour=None)

    assert all_free.total == Decimal("168.00") and all_free.free_chaperones() == 3
    assert two_paid.total == Decimal("192.00") and two_paid.free_chaperones() == 3
    assert [u.price for u in two_paid.units_of(teacher)] == [0, 0, 0, 12, 12]


def test_a_group_rate_applies_from_its_minimum_size(pupil, teacher):
    pupil.group_rates.create(min_people=20, price=Decimal("4.00"))
    pupil.group_rates.create(min_people=30, price=Decimal("3.50"))

    assert pricing.price_group({pupil: 19}, tour=None).total == Decimal("114.00")
    assert pricing.price_group({pupil: 25}, tour=None).total == Decimal("100.00")
    assert pricing.price_group({pupil: 28, teacher: 2}, tour=None).total == Decimal("122.00")


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_two_requests_racing_for_one_day_get_the_room_once(pupil, teacher):
    day = MuseumDayFactory(date=ahead(30), capacity=40)
    emails = iter(f"teacher{i}@school{i}.example" for i in range(8))

    def ask():
        try:
            group = requests.request_group(
                account=None, **school(day.date, email=next(emails), lines={"pupil": 25})
            )
            return group.places
        except SoldOut:
            return 0
        finally:
            connection.close()

    held = in_parallel(8, ask)

    assert sorted(held) == [0] * 7 + [25]
    assert sold(day) == 25
