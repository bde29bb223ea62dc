import datetime as dt

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from events.models import SpecialEvent
from tests.factories import SpecialEventFactory, UserFactory
from tickets.models import Ticket
from tickets.services import buy_ticket

EVENTS = "/admin/events/specialevent/"


def days_from_today(days: int) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


@pytest.fixture
def sold_event(db):
    event = SpecialEventFactory(name="Night at the Museum", dates=[days_from_today(2)])
    buy_ticket(
        buyer=UserFactory(),
        ticket_type="event",
        ticket_date=days_from_today(2),
        email="ada@example.com",
        event_id=event.pk,
    )
    return event


def cancel(client, events, **form):
    return client.post(
        EVENTS,
        {
            "action": "cancel_selected_events",
            "_selected_action": [str(event.pk) for event in events],
            **form,
        },
    )


def test_cancelling_first_shows_what_will_be_cancelled(desk_client, sold_event):
    page = cancel(desk_client, [sold_event])

    assert page.status_code == 200
    assert "Night at the Museum" in page.content.decode()
    assert "1 ticket will be cancelled" in page.content.decode()
    sold_event.refresh_from_db()
    assert sold_event.cancelled_at is None


def test_confirming_cancels_the_event_and_its_tickets(desk_client, sold_event, visitor_client):
    other = SpecialEventFactory(dates=[days_from_today(2)])

    response = cancel(desk_client, [sold_event], post="yes")

    assert response.status_code == 302
    sold_event.refresh_from_db()
    assert sold_event.cancelled_at is not None
    assert not Ticket.objects.filter(event=sold_event, cancelled_at__isnull=True).exists()
    other.refresh_from_db()
    assert other.cancelled_at is None
    listed = visitor_client.get("/v1.1/special-events").json()
    assert [event["name"] for event in listed] == [other.name]


def test_events_are_cancelled_not_deleted(desk_client, sold_event):
    changelist = desk_client.get(EVENTS).content.decode()

    assert "delete_selected" not in changelist
    assert "cancel_selected_events" in changelist
    assert desk_client.get(f"{EVENTS}{sold_event.pk}/delete/").status_code == 403
    assert SpecialEvent.objects.filter(pk=sold_event.pk).exists()


def test_staff_without_delete_rights_cannot_cancel(client, sold_event):
    clerk = UserFactory(is_staff=True)
    clerk.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_specialevent", "change_specialevent"])
    )
    client.force_login(clerk)

    changelist = client.get(EVENTS).content.decode()
    cancel(client, [sold_event], post="yes")

    assert "cancel_selected_events" not in changelist
    sold_event.refresh_from_db()
    assert sold_event.cancelled_at is None


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("upcoming", {"Coming", "Runs today"}),
        ("past", {"Gone"}),
        ("cancelled", {"Called off"}),
        (None, {"Coming", "Runs today", "Gone", "Called off"}),
    ],
)
def test_the_status_filter_splits_upcoming_past_and_cancelled(desk_client, status, expected):
    SpecialEventFactory(name="Coming", dates=[days_from_today(-3), days_from_today(3)])
    SpecialEventFactory(name="Runs today", dates=[days_from_today(0)])
    SpecialEventFactory(name="Gone", dates=[days_from_today(-3), days_from_today(-1)])
    SpecialEventFactory(name="Called off", dates=[days_from_today(3)], cancelled_at=timezone.now())

    response = desk_client.get(EVENTS, {"status": status} if status else {})

    shown = {event.name for event in response.context["cl"].result_list}
    assert shown == expected


def test_staff_search_events_by_name_or_location(desk_client):
    SpecialEventFactory(name="Pirate Coding Workshop", location="Education Room")
    SpecialEventFactory(name="Curator's Talk", location="Auditorium")

    by_name = desk_client.get(EVENTS, {"q": "pirate"}).context["cl"].result_list
    by_location = desk_client.get(EVENTS, {"q": "auditor"}).context["cl"].result_list

    assert [event.name for event in by_name] == ["Pirate Coding Workshop"]
    assert [event.name for event in by_location] == ["Curator's Talk"]


def test_the_list_shows_dates_places_and_tickets_sold(desk_client, sold_event):
    SpecialEvent.objects.filter(pk=sold_event.pk).update(capacity=40)

    page = desk_client.get(EVENTS).content.decode()

    assert "Upcoming" in page
    assert f"{days_from_today(2):%a %d %b %Y}" in page
    assert '<td class="field-places">40</td>' in page
    assert '<td class="field-tickets_sold">1</td>' in page


def test_the_list_costs_a_few_queries(desk_client, django_assert_max_num_queries):
    for n in range(10):
        SpecialEventFactory(dates=[days_from_today(n), days_from_today(n + 1)])

    with django_assert_max_num_queries(8):
        assert desk_client.get(EVENTS).status_code == 200
