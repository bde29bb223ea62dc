import datetime as dt

import pytest
from django.utils import timezone

from tests.factories import MuseumDayFactory

URL = "/v1.1/museum-hours"


def open_days(start: dt.date, count: int):
    return [MuseumDayFactory(date=start + dt.timedelta(days=n)) for n in range(count)]


def test_lists_open_days_from_the_museums_today_by_default(visitor_client):
    today = timezone.localdate()
    MuseumDayFactory(date=today - dt.timedelta(days=1))
    MuseumDayFactory(date=today, opens_at=dt.time(10), closes_at=dt.time(16, 30))
    MuseumDayFactory(date=today + dt.timedelta(days=1))

    response = visitor_client.get(URL)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()[0] == {
        "date": today.isoformat(),
        "timeOpen": "10:00",
        "timeClose": "16:30",
    }
    assert len(response.json()) == 2


def test_closed_days_are_not_listed(visitor_client):
    MuseumDayFactory(date=dt.date(2030, 1, 1))
    MuseumDayFactory(date=dt.date(2030, 1, 2), is_closed=True, opens_at=None, closes_at=None)
    MuseumDayFactory(date=dt.date(2030, 1, 3))

    response = visitor_client.get(URL, {"startDate": "2030-01-01"})

    assert [day["date"] for day in response.json()] == ["2030-01-01", "2030-01-03"]


def test_leap_day_and_year_boundary_are_ordinary_days(visitor_client):
    open_days(dt.date(2028, 2, 28), 3)
    open_days(dt.date(2028, 12, 31), 2)

    feb = visitor_client.get(URL, {"startDate": "2028-02-29", "limit": 2}).json()
    new_year = visitor_client.get(URL, {"startDate": "2028-12-31", "limit": 30}).json()

    assert [day["date"] for day in feb] == ["2028-02-29", "2028-03-01"]
    assert [day["date"] for day in new_year] == ["2028-12-31", "2029-01-01"]


def test_pages_follow_each_other_with_link_and_total_headers(visitor_client):
    open_days(dt.date(2030, 3, 1), 25)

    first = visitor_client.get(URL, {"startDate": "2030-03-01"})
    third = visitor_client.get(URL, {"startDate": "2030-03-01", "page": 3})

    assert len(first.json()) == 10
    assert first["X-Total-Count"] == "25"
    assert 'rel="next"' in first["Link"] and "page=2" in first["Link"]
    assert 'rel="prev"' not in first["Link"]
    assert [day["date"] for day in third.json()] == [f"2030-03-{n}" for n in range(21, 26)]
    assert 'rel="next"' not in third["Link"] and 'rel="prev"' in third["Link"]


def test_a_page_past_the_end_is_an_empty_list(visitor_client):
    open_days(dt.date(2030, 3, 1), 3)

    response = visitor_client.get(URL, {"startDate": "2030-03-01", "page": 1000000000})

    assert response.status_code == 200
    assert response.json() == []


def test_limit_30_is_the_most_a_page_holds(visitor_client):
    open_days(dt.date(2030, 3, 1), 31)

    response = visitor_client.get(URL, {"startDate": "2030-03-01", "limit": 30})

    assert len(response.json()) == 30


@pytest.mark.parametrize(
    "params, field",
    [
        ({"limit": 0}, "limit"),
        ({"limit": 31}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"page": 0}, "page"),
        ({"page": -1}, "page"),
        ({"page": "2.5"}, "page"),
        ({"startDate": "2030-02-30"}, "startDate"),
        ({"startDate": "2030-1-1"}, "startDate"),
        ({"startDate": "0000-01-01"}, "startDate"),
        ({"startDate": "tomorrow"}, "startDate"),
    ],
)
def test_bad_paging_or_dates_are_a_400_naming_the_parameter(visitor_client, params, field):
    response = visitor_client.get(URL, params)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == 400
    assert field in problem["errors"]


def test_the_last_day_of_the_calendar_is_answered(visitor_client):
    MuseumDayFactory(date=dt.date(9999, 12, 31), closes_at=dt.time(18))

    response = visitor_client.get(URL, {"startDate": "9999-12-31"})

    assert response.json() == [{"date": "9999-12-31", "timeOpen": "09:00", "timeClose": "18:00"}]


def test_hours_cost_the_same_few_queries_whatever_the_page_size(
    visitor_client, django_assert_max_num_queries
):
    open_days(dt.date(2030, 3, 1), 30)

    with django_assert_max_num_queries(3):
        response = visitor_client.get(URL, {"startDate": "2030-03-01", "limit": 30})

    assert len(response.json()) == 30


def test_hours_need_credentials(anonymous_client):
    response = anonymous_client.get(URL)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Basic realm="museum"'
    assert response["Content-Type"] == "application/problem+json"
