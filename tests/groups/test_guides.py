"""Guided tours: how many guides a group needs and what each earns, whether a guide can lead a
tour (language, audience, hours, exceptions, another tour), asking one under their lock, the
guide's answer by a signed single-use link, and the month's tours per guide."""

import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult

from audit.models import AuditRecord
from groups.exceptions import (
    AlreadyAnswered,
    GuideLinkInvalid,
    GuideLinkOutdated,
    GuideNotFree,
    TourOver,
)
from groups.guide_links import answer_token
from groups.models import AssignmentState, GroupRequest, GuideAbsence, GuideAssignment
from groups.services import guides
from tests.groups.tour_helpers import TOUR_DAY, make_group, make_guide, make_tour

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk(db):
    return User.objects.create(username="clerk", is_staff=True)


@pytest.fixture
def tour(db):
    return make_tour()


def ask(assignment, guide, by):
    return guides.assign(assignment_id=assignment.pk, guide_id=guide.pk, by=by)


def refusal(assignment, guide, by) -> str:
    with pytest.raises(GuideNotFree) as refused:
        ask(assignment, guide, by)
    assert refused.value.code == "guide_not_free" and refused.value.kind == "conflict"
    assert refused.value.extra == {"reason": refused.value.reason}
    assert refused.value.detail == str(guides.REASONS[refused.value.reason])
    return refused.value.reason


# --- How many guides, when, and what each earns ------------------------------------------------


def test_a_tour_of_40_at_25_a_guide_needs_two_open_assignments_for_its_time(tour):
    group = make_group(tour, people=40)

    planned = guides.plan_tour(group)

    assert len(planned) == 2 and group.assignments.count() == 2
    starts = dt.datetime(2030, 6, 12, 10, tzinfo=dt.UTC)
    for assignment in group.assignments.all():
        assert assignment.state == AssignmentState.OPEN and assignment.guide is None
        assert (assignment.starts, assignment.ends) == (starts, starts + dt.timedelta(hours=1))
    assert (
        guides.plan_tour(make_group(tour, people=25))
        and len(guides.plan_tour(make_group(None))) == 0
    )


def test_the_tour_starts_at_the_default_time_on_an_untimed_day_in_the_museums_zone(tour, settings):
    settings.TIME_ZONE = "Europe/Amsterdam"
    settings.MUSEUM_GROUP_DEFAULT_TOUR_TIME = "14:30"
    group = make_group(tour, at=None)

    starts, ends = guides.tour_times(group)

    zone = ZoneInfo("Europe/Amsterdam")
    assert starts == dt.datetime(2030, 6, 12, 14, 30, tzinfo=zone)
    assert ends - starts == dt.timedelta(minutes=60)
    assert starts.astimezone(dt.UTC).hour == 12  # summer time: two hours ahead of UTC


@pytest.mark.parametrize(
    ("fee", "guides_needed", "shares"),
    [
        ("90.00", 2, ["45.00", "45.00"]),
        ("100.00", 3, ["33.34", "33.33", "33.33"]),
        ("100.00", 6, ["16.65", "16.67", "16.67", "16.67", "16.67", "16.67"]),
        ("0.00", 2, ["0.00", "0.00"]),
    ],
)
def test_a_fee_per_tour_is_split_and_its_shares_sum_to_the_fee(fee, guides_needed, shares):
    tour = make_tour(fee=Decimal(fee), max_people_per_guide=10)

    planned = guides.plan_tour(make_group(tour, people=guides_needed * 10))

    assert [a.fee for a in planned] == [Decimal(s) for s in shares]
    assert sum(a.fee for a in GuideAssignment.objects.all()) == Decimal(fee)
    assert guides.fee_of(tour, guides_needed * 10) == Decimal(fee)


def test_a_fee_per_guide_is_each_guides_and_the_tours_fee_is_all_of_them():
    tour = make_tour(fee=Decimal("60.00"), fee_per="guide")

    planned = guides.plan_tour(make_group(tour, people=51))

    assert [a.fee for a in planned] == [Decimal("60.00")] * 3
    assert guides.fee_of(tour, 51) == Decimal("180.00")
    assert guides.fee_of(tour, 25) == Decimal("60.00")


# --- Asking guides ------------------------------------------------------------------------------


def test_two_free_guides_are_asked_for_a_tour_that_needs_two(tour, clerk):
    ada, bob = make_guide("Ada"), make_guide("Bob")
    first, second = guides.plan_tour(make_group(tour, people=40))

    ask(first, ada, clerk)
    ask(second, bob, clerk)

    asked = {a.guide: a for a in GuideAssignment.objects.select_related("guide")}
    assert set(asked) == {ada, bob}
    assert all(a.state == AssignmentState.ASKED and a.asked_at for a in asked.values())
    assert guides.unguided_tours(since=TOUR_DAY) == []
    record = AuditRecord.objects.filter(object_type="groups.guideassignment").first()
    assert record.action == "changed" and record.actor == clerk
    assert record.changes["state"] == ["open", "asked"]


def test_with_one_guide_free_the_second_is_refused_and_stays_on_the_desks_list(tour, clerk):
    ada = make_guide("Ada")
    first, second = guides.plan_tour(make_group(tour, people=40))
    ask(first, ada, clerk)

    assert (
        guides.free_guides(starts=second.starts, ends=second.ends, language="en", audience="school")
        == []
    )
    assert refusal(second, ada, clerk) == "busy"

    second.refresh_from_db()
    assert second.state == AssignmentState.OPEN and second.guide is None
    assert guides.unguided_tours(since=TOUR_DAY) == [second]


def test_two_groups_at_once_need_two_guides_and_one_guide_serves_both_apart(tour, clerk):
    ada, bob = make_guide("Ada"), make_guide("Bob")
    (morning,) = guides.plan_tour(make_group(tour, people=20, at="10:00"))
    (same_time,) = guides.plan_tour(make_group(tour, people=20, at="10:30"))
    (afternoon,) = guides.plan_tour(make_group(tour, people=20, at="11:00"))
    ask(morning, ada, clerk)

    assert refusal(same_time, ada, clerk) == "busy"  # 10:30 to 11:30 overlaps 10:00 to 11:00
    ask(same_time, bob, clerk)
    ask(afternoon, ada, clerk)  # starts when her first ends

    assert GuideAssignment.objects.filter(guide=ada).count() == 2


def test_a_declined_tour_does_not_keep_its_guide_busy(tour, clerk):
    ada = make_guide("Ada")
    (first,) = guides.plan_tour(make_group(tour, people=20))
    (second,) = guides.plan_tour(make_group(tour, people=20))
    ask(first, ada, clerk)
    guides.answer(token=answer_token(GuideAssignment.objects.get(pk=first.pk)), accept=False)

    ask(second, ada, clerk)

    assert GuideAssignment.objects.get(pk=second.pk).guide == ada


def test_a_guide_who_does_not_speak_the_language_or_lead_the_audience_is_refused(tour, clerk):
    english_schools = make_guide("Ada", languages=["en"], audiences=["school"])
    (german,) = guides.plan_tour(make_group(tour, people=20, language="de"))
    (company,) = guides.plan_tour(make_group(tour, people=20, kind="company", at="14:00"))

    assert refusal(german, english_schools, clerk) == "language"
    assert refusal(company, english_schools, clerk) == "audience"
    english_schools.active = False
    english_schools.save()
    assert (
        guides.why_not(
            english_schools,
            starts=german.starts,
            ends=german.ends,
            language="en",
            audience="school",
        )
        == "inactive"
    )


def test_a_guide_works_only_within_their_weekly_hours(tour, clerk):
    wednesday_mornings = make_guide("Ada", hours=[(2, "09:00", "10:45")])
    mondays = make_guide("Bob", hours=[(0, "09:00", "17:00")])
    (tour_at_ten,) = guides.plan_tour(make_group(tour, people=20, at="10:00"))
    (tour_at_nine,) = guides.plan_tour(make_group(tour, people=20, at="09:00"))

    assert refusal(tour_at_ten, wednesday_mornings, clerk) == "not_working"  # ends 11:00
    assert refusal(tour_at_ten, mondays, clerk) == "not_working"  # 12 June 2030 is a Wednesday
    ask(tour_at_nine, wednesday_mornings, clerk)


def test_split_weekly_hours_that_meet_cover_a_tour_across_them(tour, clerk):
    ada = make_guide("Ada", hours=[(2, "09:00", "10:30"), (2, "10:30", "12:00")])
    (assignment,) = guides.plan_tour(make_group(tour, people=20, at="10:00"))

    ask(assignment, ada, clerk)


def test_an_exception_takes_a_guide_away_or_gives_extra_hours(tour, clerk):
    away_all_day = make_guide("Ada")
    away_at_ten = make_guide("Bob")
    away_elsewhen = make_guide("Cy")
    sunday_only = make_guide("Dee", hours=[(6, "09:00", "17:00")])
    GuideAbsence.objects.create(guide=away_all_day, date=TOUR_DAY)
    GuideAbsence.objects.create(
        guide=away_at_ten, date=TOUR_DAY, starts=dt.time(10, 30), ends=dt.time(12)
    )
    GuideAbsence.objects.create(
        guide=away_elsewhen, date=TOUR_DAY, starts=dt.time(14), ends=dt.time(16)
    )
    GuideAbsence.objects.create(
        guide=sunday_only, date=TOUR_DAY, starts=dt.time(9, 30), ends=dt.time(12), available=True
    )
    (assignment,) = guides.plan_tour(make_group(tour, people=20, at="10:00"))

    assert refusal(assignment, away_all_day, clerk) == "not_working"
    assert refusal(assignment, away_at_ten, clerk) == "not_working"
    free = guides.free_guides(
        starts=assignment.starts, ends=assignment.ends, language="en", audience="school"
    )
    assert free == [away_elsewhen, sunday_only]
    ask(assignment, sunday_only, clerk)


def test_extra_hours_cover_a_tour_on_a_day_away(tour, clerk):
    ada = make_guide("Ada")
    GuideAbsence.objects.create(guide=ada, date=TOUR_DAY)
    GuideAbsence.objects.create(
        guide=ada, date=TOUR_DAY, starts=dt.time(10), ends=dt.time(11), available=True
    )
    (assignment,) = guides.plan_tour(make_group(tour, people=20, at="10:00"))

    ask(assignment, ada, clerk)


def test_free_guides_for_a_list_of_tours_takes_a_few_queries(
    tour, clerk, django_assert_max_num_queries
):
    for name in ["Ada", "Bob", "Cy", "Dee", "Eve"]:
        make_guide(name)
    for hour in range(9, 16):
        guides.plan_tour(make_group(tour, people=40, at=f"{hour:02}:00"))
    tours = guides.unguided_tours(since=TOUR_DAY)
    ask(tours[0], make_guide("Fay"), clerk)
    tours = guides.unguided_tours(since=TOUR_DAY)

    with django_assert_max_num_queries(4):
        free = guides.free_guides_for(tours)

    assert len(tours) == 13
    # Fay leads one of the two at 9:00: the other needs one of the five; every later one has six.
    assert [len(free[a.pk]) for a in tours] == [5] + [6] * 12


def test_a_guide_asked_again_elsewhere_is_told_the_first_tour_no_longer_needs_them(tour, clerk):
    ada, bob = make_guide("Ada"), make_guide("Bob")
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    ask(assignment, ada, clerk)
    first_token = answer_token(GuideAssignment.objects.get(pk=assignment.pk))

    ask(assignment, bob, clerk)

    with pytest.raises(GuideLinkOutdated):
        guides.answer(token=first_token, accept=True)
    assert GuideAssignment.objects.get(pk=assignment.pk).state == AssignmentState.ASKED


def test_a_tour_over_cannot_be_assigned(tour, clerk):
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    with time_machine.travel(dt.datetime(2030, 6, 12, 11, tzinfo=dt.UTC)):
        with pytest.raises(TourOver):
            ask(assignment, make_guide("Ada"), clerk)


# --- The guide's answer -------------------------------------------------------------------------


def test_the_guides_link_confirms_once(tour, clerk):
    ada = make_guide("Ada")
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    token = answer_token(ask(assignment, ada, clerk))

    confirmed = guides.answer(token=token, accept=True)

    assert confirmed.state == AssignmentState.CONFIRMED and confirmed.answered_at
    with pytest.raises(AlreadyAnswered):
        guides.answer(token=token, accept=False)
    assert GuideAssignment.objects.get(pk=assignment.pk).state == AssignmentState.CONFIRMED


def test_a_tampered_link_changes_nothing(tour, clerk):
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    token = answer_token(ask(assignment, make_guide("Ada"), clerk))

    for bad in [token[:-1] + ("A" if token[-1] != "A" else "B"), "nonsense", ""]:
        with pytest.raises(GuideLinkInvalid):
            guides.answer(token=bad, accept=False)
    assert GuideAssignment.objects.get(pk=assignment.pk).state == AssignmentState.ASKED


# --- Numbers changed ----------------------------------------------------------------------------


def test_fewer_people_remove_the_open_assignment_first_and_share_the_fee_again(tour, clerk):
    group = make_group(tour, people=60)
    first, second, third = guides.plan_tour(group)
    ask(first, make_guide("Ada"), clerk)
    group.lines.update(quantity=40)

    kept = guides.replan_tour(group)

    assert [a.pk for a in kept] == [first.pk, second.pk]
    assert [a.fee for a in kept] == [Decimal("45.00")] * 2
    assert not GuideAssignment.objects.filter(pk=third.pk).exists()


def test_fewer_people_release_the_latest_confirmed_guide_last(tour, clerk):
    group = make_group(tour, people=50)
    first, second = guides.plan_tour(group)
    ada, bob = make_guide("Ada"), make_guide("Bob")
    guides.answer(token=answer_token(ask(first, ada, clerk)), accept=True)
    guides.answer(token=answer_token(ask(second, bob, clerk)), accept=True)
    group.lines.update(quantity=20)

    (kept,) = guides.replan_tour(group)

    assert kept.guide == ada and kept.fee == Decimal("90.00")
    deleted = AuditRecord.objects.get(action="deleted")
    assert deleted.object_id == str(second.pk) and deleted.changes["guide"] == bob.pk


def test_a_group_called_off_releases_its_guides_by_email(tour, clerk):
    group = make_group(tour, people=40)
    first, second = guides.plan_tour(group)
    ada = make_guide("Ada")
    guides.answer(token=answer_token(ask(first, ada, clerk)), accept=True)
    group = GroupRequest.objects.prefetch_related("lines").get(pk=group.pk)
    group.lines.all().delete()  # its prefetched lines still say 40

    assert guides.replan_tour(group) == []

    assert not GuideAssignment.objects.exists()
    released = DBTaskResult.objects.get(task_path="groups.guide_emails.send_guide_released")
    assert released.args_kwargs["kwargs"]["guide_id"] == ada.pk


def test_more_people_add_open_assignments(tour):
    group = make_group(tour, people=20)
    guides.plan_tour(group)
    group.lines.update(quantity=70)

    planned = guides.replan_tour(group)

    assert [a.state for a in planned] == ["open"] * 3
    assert sum(a.fee for a in planned) == Decimal("90.00")


# --- The month's report -------------------------------------------------------------------------


def test_the_months_tours_per_guide(tour, clerk):
    ada, bob = make_guide("Ada"), make_guide("Bob")
    long_tour = make_tour(name="Everything", duration_minutes=150, fee=Decimal("100.00"))
    first, second = guides.plan_tour(make_group(tour, people=40))  # 45.00 each
    (long,) = guides.plan_tour(make_group(long_tour, people=10, at="13:00"))
    (july,) = guides.plan_tour(make_group(tour, people=10, day=dt.date(2030, 7, 1)))
    (declined,) = guides.plan_tour(make_group(tour, people=10, day=dt.date(2030, 6, 20)))
    guides.answer(token=answer_token(ask(first, ada, clerk)), accept=True)
    ask(long, ada, clerk)
    ask(second, bob, clerk)
    ask(july, bob, clerk)
    guides.answer(token=answer_token(ask(declined, bob, clerk)), accept=False)

    report = guides.tours_by_guide(dt.date(2030, 6, 1))

    assert report == [
        guides.GuideMonth(ada.pk, "Ada", 2, 1, 1, Decimal("3.50"), Decimal("145.00")),
        guides.GuideMonth(bob.pk, "Bob", 1, 0, 1, Decimal("1.00"), Decimal("45.00")),
    ]
    assert guides.tours_by_guide(dt.date(2030, 5, 1)) == []
