"""Hours and events are answered from the response cache, and every write shows on the next read."""

import datetime as dt

import pytest
from django.core.cache import cache

from hours.services import apply_weekly_pattern, close_days, parse_weekly_pattern
from museum import response_cache
from tests.conftest import cache_commands
from tests.factories import MuseumDayFactory, SpecialEventFactory

# Each test is one process, so its own cache stands in for the shared one.
pytestmark = pytest.mark.usefixtures("response_cache")

HOURS = "/v1.1/museum-hours"
EVENTS = "/v1.1/special-events"
DAY = dt.date(2030, 1, 1)
WEEK = {"startDate": "2030-01-01", "endDate": "2030-01-07"}


@pytest.fixture
def event(db):
    return SpecialEventFactory(name="Night at the museum", dates=[DAY])


def hours(client, **query):
    return [day["date"] for day in client.get(HOURS, {"startDate": "2030-01-01", **query}).json()]


def test_a_repeated_read_costs_only_the_account(visitor_client, event, django_assert_num_queries):
    first = visitor_client.get(f"{EVENTS}/{event.id}")

    with django_assert_num_queries(1):  # the account; the event comes from the cache
        again = visitor_client.get(f"{EVENTS}/{event.id}")

    assert again.json() == first.json()
    assert again["Content-Type"] == "application/json"


@pytest.mark.parametrize("path", [HOURS, f"{EVENTS}/{{id}}"])
def test_a_signed_in_cached_read_is_one_cache_round_trip(
    shared_redis_cache, visitor_client, event, path
):
    path = path.format(id=event.id)
    first = visitor_client.get(path)
    visitor_client.get(path)  # the account, kept with the remembered credential from now on
    answers = []

    assert cache_commands(lambda: answers.append(visitor_client.get(path))) == ["EVALSHA"]
    assert answers[0].json() == first.json()
    assert int(answers[0]["RateLimit-Remaining"]) == int(first["RateLimit-Remaining"]) - 2


def test_a_cached_page_keeps_its_paging_headers_and_gets_fresh_rate_limit_ones(visitor_client):
    for offset in range(3):
        MuseumDayFactory(date=DAY + dt.timedelta(days=offset))
    first = visitor_client.get(HOURS, {"startDate": "2030-01-01", "limit": 2})
    again = visitor_client.get(HOURS, {"startDate": "2030-01-01", "limit": 2})

    assert again.json() == first.json()
    assert again["X-Total-Count"] == first["X-Total-Count"] == "3"
    assert again["Link"] == first["Link"]
    assert int(again["RateLimit-Remaining"]) == int(first["RateLimit-Remaining"]) - 1


def test_each_query_has_its_own_response(visitor_client):
    MuseumDayFactory(date=DAY)
    MuseumDayFactory(date=DAY + dt.timedelta(days=1))

    assert hours(visitor_client) == ["2030-01-01", "2030-01-02"]
    assert hours(visitor_client, startDate="2030-01-02") == ["2030-01-02"]


def test_an_edited_event_shows_on_the_next_read(staff_client, event):
    staff_client.get(f"{EVENTS}/{event.id}")
    staff_client.get(EVENTS, WEEK)

    staff_client.patch(f"{EVENTS}/{event.id}", {"name": "Late opening"}, format="json")

    assert staff_client.get(f"{EVENTS}/{event.id}").json()["name"] == "Late opening"
    assert [e["name"] for e in staff_client.get(EVENTS, WEEK).json()] == ["Late opening"]


def test_a_cancelled_event_is_gone_on_the_next_read(staff_client, event):
    staff_client.get(f"{EVENTS}/{event.id}")
    staff_client.get(EVENTS, WEEK)

    staff_client.delete(f"{EVENTS}/{event.id}")

    assert staff_client.get(f"{EVENTS}/{event.id}").status_code == 404
    assert staff_client.get(EVENTS, WEEK).json() == []


def test_a_new_event_is_listed_on_the_next_read(staff_client, event):
    assert len(staff_client.get(EVENTS, WEEK).json()) == 1

    SpecialEventFactory(dates=[DAY])

    assert len(staff_client.get(EVENTS, WEEK).json()) == 2


def test_a_day_saved_through_the_orm_shows_on_the_next_read(visitor_client):
    day = MuseumDayFactory(date=DAY)
    assert hours(visitor_client) == ["2030-01-01"]

    day.is_closed = True
    day.save()

    assert hours(visitor_client) == []


def test_days_closed_in_bulk_show_on_the_next_read(visitor_client):
    MuseumDayFactory(date=DAY)
    assert hours(visitor_client) == ["2030-01-01"]

    close_days(dates=[DAY], note="Burst pipe")

    assert hours(visitor_client) == []


def test_days_seeded_in_bulk_show_on_the_next_read(visitor_client):
    assert hours(visitor_client) == []

    apply_weekly_pattern(start=DAY, days=2, pattern=parse_weekly_pattern("mon-sun 09:00-17:00"))

    assert hours(visitor_client) == ["2030-01-01", "2030-01-02"]


def test_a_write_changes_the_version_again_when_it_commits(db, django_capture_on_commit_callbacks):
    # A reader may build a response from the rows as they were before the commit; the second new
    # version makes whatever it stored stale.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response_cache.group_changed("events")
    before_commit = cache.get("museum:response-cache:events:version")

    for callback in callbacks:
        callback()

    assert cache.get("museum:response-cache:events:version") not in (None, before_commit)


def test_an_evicted_version_is_a_miss_not_an_old_response(visitor_client):
    day = MuseumDayFactory(date=DAY)
    assert hours(visitor_client) == ["2030-01-01"]

    cache.delete("museum:response-cache:hours:version")
    # A change nothing announced, then the version gone: the stored response must not come back.
    type(day).objects.filter(date=DAY).update(is_closed=True)

    assert hours(visitor_client) == []


def test_zero_seconds_turns_the_cache_off(
    visitor_client, event, settings, django_assert_num_queries
):
    settings.MUSEUM_RESPONSE_CACHE_SECONDS = 0
    visitor_client.get(f"{EVENTS}/{event.id}")

    with django_assert_num_queries(3):  # the account, the event, its dates
        visitor_client.get(f"{EVENTS}/{event.id}")
