import datetime as dt
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import Permission
from django.db import connection, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from events.models import EventDate, SpecialEvent
from events.services import DatesHaveTickets, update_event
from orders.models import Ticket
from orders.services.sale import buy_ticket
from tests.factories import (
    SpecialEventFactory,
    TicketFactory,
    UserFactory,
    days_from_today,
    partner_member,
    staff_member,
)

EVENTS = "/admin/events/specialevent/"


@pytest.fixture
def sold_event(db):
    event = SpecialEventFactory(name="Night at the Museum", dates=[days_from_today(2)])
    buy_ticket(
        buyer=partner_member(),
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


# Edits go through the services


def event_form(event, dates, **changes) -> dict:
    form = {
        "name_en": event.name,
        "location_en": event.location,
        "description_en": event.description,
        "price": "12.50",
        "tax_rate": "0",
        "capacity": "" if event.capacity is None else str(event.capacity),
        "dates-TOTAL_FORMS": str(len(dates)),
        "dates-INITIAL_FORMS": str(len(dates)),
    }
    for n, slot in enumerate(dates):
        form |= {f"dates-{n}-id": str(slot.pk), f"dates-{n}-date": slot.date.isoformat()}
        form[f"dates-{n}-event"] = str(event.pk)
    return form | changes


def test_adding_an_event_in_the_admin_gives_each_date_the_capacity(desk_client):
    form = {
        "name_en": "Lantern walk",
        "location_en": "Garden",
        "description_en": "After dark.",
        "price": "8",
        "tax_rate": "0",
        "capacity": "12",
        "dates-TOTAL_FORMS": "2",
        "dates-INITIAL_FORMS": "0",
        "dates-0-date": days_from_today(3).isoformat(),
        "dates-1-date": days_from_today(4).isoformat(),
        "_continue": "Save and continue editing",
    }

    response = desk_client.post(f"{EVENTS}add/", form)

    event = SpecialEvent.objects.get(name="Lantern walk")
    assert response.status_code == 302
    assert response["Location"] == f"{EVENTS}{event.pk}/change/"
    assert sorted(event.dates.values_list("date", "capacity")) == [
        (days_from_today(3), 12),
        (days_from_today(4), 12),
    ]


def test_moving_a_sold_date_in_the_admin_is_refused_as_its_removal(desk_client, sold_event):
    slot = sold_event.dates.get()
    form = event_form(sold_event, [slot], **{"dates-0-date": days_from_today(5).isoformat()})

    response = desk_client.post(f"{EVENTS}{sold_event.pk}/change/", form)

    assert response.status_code == 200
    assert "those dates cannot be removed" in response.content.decode()
    slot.refresh_from_db()
    assert (slot.date, slot.sold, slot.tickets.count()) == (days_from_today(2), 1, 1)


def test_a_date_a_ticket_points_at_is_kept_even_when_its_count_says_none(db):
    event = SpecialEventFactory(dates=[days_from_today(2), days_from_today(3)])
    TicketFactory(ticket_type="event", event=event, date=days_from_today(2))  # sold stays 0

    with pytest.raises(DatesHaveTickets) as refused:
        update_event(event_id=event.pk, dates=[days_from_today(3)])

    assert refused.value.extra["dates"] == [days_from_today(2).isoformat()]
    assert event.dates.count() == 2
    with pytest.raises(ProtectedError):
        EventDate.objects.filter(event=event).delete()


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_an_admin_edit_waits_for_the_events_lock(client):
    event = SpecialEventFactory(capacity=5, dates=[days_from_today(2)])
    client.force_login(staff_member(username="desk"))
    form = event_form(event, list(event.dates.all()), capacity="7")
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock():  # as a purchase of the event does
        try:
            with transaction.atomic():
                SpecialEvent.objects.select_for_update().get(pk=event.pk)
                locked.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    def edit():
        try:
            return client.post(f"{EVENTS}{event.pk}/change/", form)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        holder = pool.submit(hold_the_lock)
        assert locked.wait(timeout=30)
        edited = pool.submit(edit)
        waiting = waiting_statements(until_one=True)
        release.set()
        holder.result()
        response = edited.result()

    # The service's lock on the event row, not a write blocked on it: a SELECT of the event that
    # waits is its FOR UPDATE (a plain SELECT never waits on a row lock). PostgreSQL keeps only
    # the start of a long statement's text, so the start is what is compared.
    assert len(waiting) == 1, waiting
    assert waiting[0].startswith('SELECT "events_specialevent"."id"'), waiting
    assert response.status_code == 302
    assert set(event.dates.values_list("capacity", flat=True)) == {7}


def waiting_statements(*, until_one: bool) -> list[str]:
    """The statements of this database's sessions waiting for a lock, once there is one."""
    deadline = time.monotonic() + 30
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT query FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            waiting = [query for (query,) in cursor.fetchall()]
        if waiting or not until_one or time.monotonic() > deadline:
            return waiting
        time.sleep(0.01)  # polling for a state another thread reaches, not waiting out a race


def sold_event_form(event, slot, **changes) -> dict:
    return {
        "name_en": event.name,
        "location_en": event.location,
        "description_en": event.description,
        "price": "12.50",
        "tax_rate": "0",
        "capacity": "5",
        "dates-TOTAL_FORMS": "1",
        "dates-INITIAL_FORMS": "1",
        "dates-0-id": str(slot.pk),
        "dates-0-event": str(event.pk),
        "dates-0-date": slot.date.isoformat(),
        **changes,
    }


def test_the_event_page_shows_sold_against_capacity_and_keeps_sold_dates(admin_client):
    event = SpecialEventFactory(capacity=5, dates=[dt.date(2030, 1, 1)])
    EventDate.objects.filter(event=event).update(sold=3, capacity=5)
    slot = EventDate.objects.get(event=event)
    change = f"/admin/events/specialevent/{event.pk}/change/"

    page = admin_client.get(change)
    below_sold = admin_client.post(change, sold_event_form(event, slot, capacity="2"))
    removed = admin_client.post(change, sold_event_form(event, slot, **{"dates-0-DELETE": "on"}))

    assert "tickets sold against capacity" in page.content.decode()
    assert below_sold.status_code == removed.status_code == 200  # the form, with its error
    # The services' own refusals, as the API gives them.
    assert (
        "3 tickets are already sold for one date; capacity cannot be 2."
        in (below_sold.context["adminform"].form.errors["capacity"])
    )
    assert "Tickets are sold for 2030-01-01; those dates cannot be removed." in (
        removed.context["adminform"].form.non_field_errors()
    )
    assert EventDate.objects.filter(pk=slot.pk, capacity=5).exists()


def test_saving_an_event_in_the_admin_gives_every_date_its_capacity(admin_client):
    event = SpecialEventFactory(dates=[dt.date(2030, 1, 1)])
    slot = EventDate.objects.get(event=event)
    form = {
        "name_en": event.name,
        "location_en": event.location,
        "description_en": event.description,
        "price": "12.50",
        "tax_rate": "0",
        "capacity": "40",
        "dates-TOTAL_FORMS": "2",
        "dates-INITIAL_FORMS": "1",
        "dates-0-id": str(slot.pk),
        "dates-0-event": str(event.pk),
        "dates-0-date": "2030-01-01",
        "dates-1-event": str(event.pk),
        "dates-1-date": "2030-01-02",
    }

    response = admin_client.post(f"/admin/events/specialevent/{event.pk}/change/", form)

    assert response.status_code == 302
    assert set(EventDate.objects.values_list("capacity", flat=True)) == {40}
    assert EventDate.objects.count() == 2
