import datetime as dt

import pytest

from events.models import EventDate
from tests.factories import MuseumDayFactory, SpecialEventFactory, TicketFactory, UserFactory


@pytest.fixture
def admin_client(client, db):
    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def ticket(db):
    return TicketFactory(confirmation_code="ticket-general-abcdef-12345")


def test_staff_find_a_ticket_by_code_or_email_and_see_its_image(admin_client, ticket):
    by_code = admin_client.get("/admin/tickets/ticket/", {"q": "abcdef-12345"})
    by_email = admin_client.get("/admin/tickets/ticket/", {"q": "ada@example"})
    page = admin_client.get(f"/admin/tickets/ticket/{ticket.pk}/change/")

    assert ticket.confirmation_code in by_code.content.decode()
    assert ticket.confirmation_code in by_email.content.decode()
    assert b"data:image/png;base64," in page.content


def sold_event_form(event, slot, **changes) -> dict:
    return {
        "name": event.name,
        "location": event.location,
        "description": event.description,
        "price": "12.50",
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
        "name": event.name,
        "location": event.location,
        "description": event.description,
        "price": "12.50",
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


def test_editing_a_day_in_the_admin_protects_it_from_seeding(admin_client):
    day = MuseumDayFactory(date=dt.date(2030, 1, 7))

    admin_client.post(
        f"/admin/hours/museumday/{day.date.isoformat()}/change/",
        {"date": "2030-01-07", "opens_at": "12:00", "closes_at": "14:00", "note": "Short day"},
    )

    day.refresh_from_db()
    assert day.edited_by_staff and day.opens_at == dt.time(12)
