import datetime as dt
import uuid

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from events.models import EventDate, SpecialEvent
from tests.conftest import client_for
from tests.factories import SpecialEventFactory, UserFactory

URL = "/v1.1/special-events"
NEW_EVENT = {
    "name": "Mermaid Treasure Identification and Analysis",
    "location": "Under the seaaa 🦀 🎶 🌊.",
    "eventDescription": "Join us as we review and classify a rare collection.",
    "dates": ["2030-09-08", "2030-09-05", "2030-09-08"],
    "price": 19.99,
}


def event_url(event) -> str:
    return f"{URL}/{event.pk}"


def names(response) -> list[str]:
    return [event["name"] for event in response.json()]


# Creating


def test_staff_create_an_event_with_sorted_unique_dates(staff_client):
    response = staff_client.post(URL, NEW_EVENT, format="json")

    assert response.status_code == 201
    body = response.json()
    event = SpecialEvent.objects.get(pk=body["eventId"])
    assert body == {
        "eventId": str(event.pk),
        "name": NEW_EVENT["name"],
        "location": NEW_EVENT["location"],
        "eventDescription": NEW_EVENT["eventDescription"],
        "dates": ["2030-09-05", "2030-09-08"],
        "price": 19.99,
        "capacity": None,
        "startTime": None,
        "endTime": None,
    }
    assert str(event.price) == "19.99"


def test_a_whole_price_comes_back_as_a_json_integer(staff_client):
    response = staff_client.post(URL, {**NEW_EVENT, "price": 0}, format="json")

    assert '"price":0,' in response.content.decode()


@pytest.mark.parametrize(
    "change, field",
    [
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": 42}, "name"),
        ({"name": None}, "name"),
        ({"location": "nul\x00byte"}, "location"),
        ({"eventDescription": "x" * 5001}, "eventDescription"),
        ({"dates": []}, "dates"),
        ({"dates": "2030-01-01"}, "dates"),
        ({"dates": ["2030-02-29"]}, "dates.0"),
        ({"dates": ["2030-01-01", "01/02/2030"]}, "dates.1"),
        ({"dates": ["2030-01-01"] * 367}, "dates"),
        ({"price": -1}, "price"),
        ({"price": 1.005}, "price"),
        ({"price": "25"}, "price"),
        ({"price": True}, "price"),
        ({"price": 10**12}, "price"),
    ],
)
def test_invalid_fields_are_named_in_a_validation_problem(staff_client, change, field):
    response = staff_client.post(URL, {**NEW_EVENT, **change}, format="json")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["title"] == "Validation failed"
    assert field in problem["errors"]
    assert not SpecialEvent.objects.exists()


@pytest.mark.parametrize("missing", ["name", "location", "eventDescription", "dates", "price"])
def test_all_five_fields_are_required_on_create(staff_client, missing):
    body = {key: value for key, value in NEW_EVENT.items() if key != missing}

    response = staff_client.post(URL, body, format="json")

    assert response.status_code == 400
    assert missing in response.json()["errors"]


def test_a_visitor_may_not_create_events(visitor_client):
    response = visitor_client.post(URL, NEW_EVENT, format="json")

    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert not SpecialEvent.objects.exists()


def test_is_staff_without_permissions_may_not_create_change_or_delete_events(bare_staff):
    event = SpecialEventFactory(name="Kept")
    client = client_for(bare_staff)

    created = client.post(URL, NEW_EVENT, format="json")
    changed = client.patch(event_url(event), {"name": "Changed"}, format="json")
    deleted = client.delete(event_url(event))

    assert (created.status_code, changed.status_code, deleted.status_code) == (403, 403, 403)
    assert created["Content-Type"] == "application/problem+json"
    event.refresh_from_db()
    assert (event.name, event.cancelled_at) == ("Kept", None)
    assert SpecialEvent.objects.count() == 1


def test_door_staff_may_not_create_events(door_staff):
    response = client_for(door_staff).post(URL, NEW_EVENT, format="json")

    assert response.status_code == 403
    assert not SpecialEvent.objects.exists()


def test_an_account_with_the_add_permission_may_create_events(db):
    planner = UserFactory(username="planner")
    planner.user_permissions.add(Permission.objects.get(codename="add_specialevent"))

    response = client_for(planner).post(URL, NEW_EVENT, format="json")

    assert response.status_code == 201


# Reading


def test_get_returns_the_event(visitor_client):
    event = SpecialEventFactory(dates=[dt.date(2030, 5, 2), dt.date(2030, 5, 1)])

    response = visitor_client.get(event_url(event))

    assert response.status_code == 200
    assert response.json()["dates"] == ["2030-05-01", "2030-05-02"]
    assert response.json()["price"] == 12.5


@pytest.mark.parametrize("suffix", [str(uuid.uuid4()), "not-a-uuid", "..%2F..%2Fetc%2Fpasswd", "1"])
def test_unknown_or_malformed_ids_are_a_404_problem(visitor_client, suffix):
    response = visitor_client.get(f"{URL}/{suffix}")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["status"] == 404


# Listing


def test_lists_events_with_a_date_in_the_range_in_a_stable_order(visitor_client):
    SpecialEventFactory(name="Before", dates=[dt.date(2030, 4, 30)])
    SpecialEventFactory(name="Zebra talk", dates=[dt.date(2030, 5, 2)])
    SpecialEventFactory(name="Ant talk", dates=[dt.date(2030, 4, 1), dt.date(2030, 5, 2)])
    SpecialEventFactory(name="Early", dates=[dt.date(2030, 5, 1), dt.date(2030, 6, 1)])
    SpecialEventFactory(name="After", dates=[dt.date(2030, 5, 9)])

    response = visitor_client.get(URL, {"startDate": "2030-05-01", "endDate": "2030-05-08"})

    assert response.status_code == 200
    assert names(response) == ["Early", "Ant talk", "Zebra talk"]
    assert response.json()[1]["dates"] == ["2030-04-01", "2030-05-02"]


def test_the_range_defaults_to_today_and_seven_days_on(visitor_client):
    today = timezone.localdate()
    SpecialEventFactory(name="Yesterday", dates=[today - dt.timedelta(days=1)])
    SpecialEventFactory(name="Today", dates=[today])
    SpecialEventFactory(name="In a week", dates=[today + dt.timedelta(days=7)])
    SpecialEventFactory(name="In eight days", dates=[today + dt.timedelta(days=8)])

    assert names(visitor_client.get(URL)) == ["Today", "In a week"]


def test_end_date_defaults_to_seven_days_after_the_start_date(visitor_client):
    SpecialEventFactory(name="In", dates=[dt.date(2030, 1, 8)])
    SpecialEventFactory(name="Out", dates=[dt.date(2030, 1, 9)])

    assert names(visitor_client.get(URL, {"startDate": "2030-01-01"})) == ["In"]


def test_the_range_may_end_on_the_calendars_last_day(visitor_client):
    SpecialEventFactory(name="Last", dates=[dt.date(9999, 12, 31)])

    assert names(visitor_client.get(URL, {"startDate": "9999-12-30"})) == ["Last"]


@pytest.mark.parametrize(
    "params, field",
    [
        ({"startDate": "2030-01-10", "endDate": "2030-01-09"}, "endDate"),
        ({"startDate": "2030-01-01", "endDate": "2031-06-01"}, "endDate"),
        ({"endDate": "2023-02-29"}, "endDate"),
        ({"limit": 31}, "limit"),
        ({"limit": 0}, "limit"),
        ({"page": 0}, "page"),
    ],
)
def test_bad_list_parameters_are_a_400(visitor_client, params, field):
    response = visitor_client.get(URL, params)

    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_pages_through_the_list_with_headers(visitor_client):
    for n in range(12):
        SpecialEventFactory(name=f"Talk {n:02d}", dates=[dt.date(2030, 1, 2)])

    first = visitor_client.get(URL, {"startDate": "2030-01-01", "limit": 5})
    last = visitor_client.get(URL, {"startDate": "2030-01-01", "limit": 5, "page": 3})
    beyond = visitor_client.get(URL, {"startDate": "2030-01-01", "limit": 5, "page": 4})

    assert names(first) == [f"Talk {n:02d}" for n in range(5)]
    assert first["X-Total-Count"] == "12"
    assert names(last) == ["Talk 10", "Talk 11"]
    assert beyond.status_code == 200 and beyond.json() == []


def test_a_page_costs_the_same_queries_whatever_its_size(
    visitor_client, django_assert_max_num_queries
):
    for n in range(30):
        SpecialEventFactory(dates=[dt.date(2030, 1, 1), dt.date(2030, 1, 2 + n % 5)])

    # The user, the count, the page and its dates.
    with django_assert_max_num_queries(4):
        response = visitor_client.get(URL, {"startDate": "2030-01-01", "limit": 30})

    assert len(response.json()) == 30


# Changing


def test_patch_changes_only_the_fields_sent(staff_client):
    event = SpecialEventFactory(name="Old", dates=[dt.date(2030, 1, 1)])

    response = staff_client.patch(
        event_url(event), {"location": "On the beach.", "price": 15}, format="json"
    )

    assert response.status_code == 200
    assert response.json() == {
        "eventId": str(event.pk),
        "name": "Old",
        "location": "On the beach.",
        "eventDescription": "A special event.",
        "dates": ["2030-01-01"],
        "price": 15,
        "capacity": None,
        "startTime": None,
        "endTime": None,
    }


def test_patch_replaces_the_dates(staff_client):
    event = SpecialEventFactory(dates=[dt.date(2030, 1, 1), dt.date(2030, 1, 2)])

    response = staff_client.patch(
        event_url(event), {"dates": ["2030-01-03", "2030-01-02"]}, format="json"
    )

    assert response.json()["dates"] == ["2030-01-02", "2030-01-03"]
    assert sorted(EventDate.objects.values_list("date", flat=True)) == [
        dt.date(2030, 1, 2),
        dt.date(2030, 1, 3),
    ]


def test_an_invalid_patch_changes_nothing(staff_client):
    event = SpecialEventFactory(name="Kept", dates=[dt.date(2030, 1, 1)])

    response = staff_client.patch(
        event_url(event), {"name": "New", "dates": ["2030-13-01"]}, format="json"
    )

    assert response.status_code == 400
    event.refresh_from_db()
    assert event.name == "Kept"


def test_a_visitor_may_not_change_or_delete_events(visitor_client):
    event = SpecialEventFactory(name="Kept")

    assert visitor_client.patch(event_url(event), {"name": "X"}, format="json").status_code == 403
    assert visitor_client.delete(event_url(event)).status_code == 403
    event.refresh_from_db()
    assert event.name == "Kept" and event.cancelled_at is None


def test_put_is_not_part_of_the_api(staff_client):
    event = SpecialEventFactory()

    response = staff_client.put(event_url(event), NEW_EVENT, format="json")

    assert response.status_code == 405
    assert response["Content-Type"] == "application/problem+json"


# Deleting


def test_delete_cancels_the_event_and_hides_it_from_every_read(staff_client):
    event = SpecialEventFactory(dates=[dt.date(2030, 1, 1)])

    response = staff_client.delete(event_url(event))

    assert response.status_code == 204
    assert staff_client.get(event_url(event)).status_code == 404
    assert staff_client.get(URL, {"startDate": "2030-01-01"}).json() == []
    assert staff_client.patch(event_url(event), {"name": "X"}, format="json").status_code == 404
    assert staff_client.delete(event_url(event)).status_code == 404
    event.refresh_from_db()
    assert event.cancelled_at is not None


def test_a_patch_reads_the_event_once_under_its_lock(staff_client):
    event = SpecialEventFactory(name="Old", dates=[dt.date(2030, 1, 1)])

    with CaptureQueriesContext(connection) as queries:
        response = staff_client.patch(event_url(event), {"name": "New"}, format="json")

    assert response.status_code == 200 and response.json()["name"] == "New"
    reads = [q["sql"] for q in queries if q["sql"].startswith('SELECT "events_specialevent"')]
    assert len(reads) == 1  # the service's, under the row lock (FOR UPDATE, on PostgreSQL)
