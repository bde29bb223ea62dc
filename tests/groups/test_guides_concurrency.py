"""Two staff asking one guide for overlapping tours at once, against a real PostgreSQL server:
the second ask waits for the guide's row lock, then finds the guide busy."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from groups.exceptions import GuideNotFree
from groups.models import AssignmentState, GuideAssignment
from groups.services import guides
from tests.groups.tour_helpers import make_group, make_guide, make_tour

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def ask_or_refusal(assignment, guide, clerk) -> str:
    try:
        guides.assign(assignment_id=assignment.pk, guide_id=guide.pk, by=clerk)
        return "asked"
    except GuideNotFree as refused:
        return refused.reason
    finally:
        connection.close()


def test_two_asks_of_one_guide_for_overlapping_tours_at_once_one_wins():
    clerk = User.objects.create(username="clerk", is_staff=True)
    ada, tour = make_guide("Ada"), make_tour()
    first, second = guides.plan_tour(make_group(tour, people=40))
    start = threading.Barrier(2)

    def ask(assignment):
        start.wait()
        return ask_or_refusal(assignment, ada, clerk)

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(ask, [first, second]))

    assert sorted(outcomes) == ["asked", "busy"]
    assert GuideAssignment.objects.filter(guide=ada, state=AssignmentState.ASKED).count() == 1


def waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def test_the_second_ask_waits_for_the_first_to_commit_and_finds_the_guide_busy():
    clerk = User.objects.create(username="clerk", is_staff=True)
    ada, tour = make_guide("Ada"), make_tour()
    first, second = guides.plan_tour(make_group(tour, people=40))

    with ThreadPoolExecutor(max_workers=1) as pool:
        with transaction.atomic():
            guides.assign(assignment_id=first.pk, guide_id=ada.pk, by=clerk)
            later = pool.submit(ask_or_refusal, second, ada, clerk)
            # Read from another connection: the first ask's transaction is still open.
            deadline = time.monotonic() + 10
            with ThreadPoolExecutor(max_workers=1) as watcher:
                while not watcher.submit(watch).result():
                    assert time.monotonic() < deadline, "the second ask never waited"
            assert not later.done()
        outcome = later.result(timeout=10)

    assert outcome == "busy"
    assert GuideAssignment.objects.get(pk=second.pk).state == AssignmentState.OPEN


def watch() -> bool:
    try:
        return waiting_for_a_lock()
    finally:
        connection.close()
