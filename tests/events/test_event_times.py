"""An event's own start and end time: set in the API and the admin (an end after the start), and
said by the confirmation email, its calendar entry and the tickets' PDF instead of the day's
opening hours."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.db import IntegrityError, transaction
from icalendar import Calendar

from events.models import SpecialEvent
from orders.models import Order
from tests.conftest import EVENT, assert_problem, run_task_worker
from tests.factories import MuseumDayFactory, SpecialEventFactory
from tests.orders.conftest import order_body
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, pdf_text

EVENTS = "/v1.1/special-events"
VISIT = dt.date(2030, 6, 12)  # a Wednesday


def test_the_api_sets_and_answers_an_events_times(staff_client, db):
    made = staff_client.post(EVENTS, {**EVENT, "startTime": "19:00"}, format="json")
    assert made.status_code == 201
    assert (made.json()["startTime"], made.json()["endTime"]) == ("19:00", None)

    changed = staff_client.patch(
        f"{EVENTS}/{made.json()['eventId']}", {"endTime": "21:30"}, format="json"
    )

    assert (changed.json()["startTime"], changed.json()["endTime"]) == ("19:00", "21:30")
    event = SpecialEvent.objects.get()
    assert (event.starts_at, event.ends_at) == (dt.time(19), dt.time(21, 30))


@pytest.mark.parametrize(
    "times", [{"startTime": "19:00", "endTime": "18:00"}, {"endTime": "21:00"}, {"endTime": "7pm"}]
)
def test_an_event_ends_after_it_starts_or_the_api_says_400(staff_client, db, times):
    answer = staff_client.post(EVENTS, {**EVENT, **times}, format="json")

    assert_problem(answer, 400)
    assert "endTime" in answer.json()["errors"]
    assert not SpecialEvent.objects.exists()


def test_the_database_refuses_an_end_before_the_start(db):
    event = SpecialEventFactory()
    event.starts_at, event.ends_at = dt.time(19), dt.time(18)

    with pytest.raises(IntegrityError), transaction.atomic():
        event.save()


@pytest.fixture
def amsterdam(settings):
    settings.TIME_ZONE = "Europe/Amsterdam"


@NEEDS_POPPLER
@pytest.mark.django_db(transaction=True)  # the task worker sends the email
def test_the_email_its_calendar_and_the_pdf_say_the_events_times(visitor_client, amsterdam):
    MuseumDayFactory(date=VISIT, opens_at=dt.time(9), closes_at=dt.time(18))
    event = SpecialEventFactory(name="Night tour", dates=[VISIT])
    event.starts_at, event.ends_at = dt.time(19), dt.time(21, 30)
    event.save()

    answer = visitor_client.post(
        "/v1.1/orders", order_body(VISIT, ticketType="event", eventId=str(event.pk)), format="json"
    )
    run_task_worker()

    [message] = mail.outbox
    assert "Date: Wednesday 12 Jun 2030, 19:00–21:30\n" in message.body
    assert "09:00" not in message.body  # not the day's opening hours
    [ics] = [content for _, content, kind in message.attachments if kind == "text/calendar"]
    [visit] = Calendar.from_ical(ics).walk("VEVENT")
    zone = ZoneInfo("Europe/Amsterdam")
    assert visit.decoded("DTSTART") == dt.datetime(2030, 6, 12, 19, tzinfo=zone)
    assert visit.decoded("DTEND") == dt.datetime(2030, 6, 12, 21, 30, tzinfo=zone)
    order = Order.objects.get(pk=answer.json()["orderId"])
    text = pdf_text(visitor_client.get(f"/v1.1/orders/{order.pk}/tickets.pdf").content)
    assert "On Wednesday 12 Jun 2030: 19:00–21:30" in text and "Entry from 19:00" in text
    assert "Open on" not in text


def test_an_event_with_a_start_alone_ends_in_the_calendar_when_the_museum_closes(
    visitor_client, amsterdam
):
    from orders.notifications import confirmation_context, visit_times
    from orders.selectors import order_account

    MuseumDayFactory(date=VISIT, opens_at=dt.time(9), closes_at=dt.time(18))
    event = SpecialEventFactory(name="Curator's talk", dates=[VISIT])
    event.starts_at = dt.time(14)
    event.save()
    answer = visitor_client.post(
        "/v1.1/orders", order_body(VISIT, ticketType="event", eventId=str(event.pk)), format="json"
    )
    order = Order.objects.get(pk=answer.json()["orderId"])

    start, end = visit_times(order=order)

    assert (start.time(), end.time()) == (dt.time(14), dt.time(18))
    assert confirmation_context(order=order, account=order_account(order=order))["when"] == (
        "Wednesday 12 Jun 2030, from 14:00"
    )


def test_the_admin_sets_an_events_times_and_refuses_an_end_before_its_start(desk_client):
    from tests.events.test_admin import event_form

    event = SpecialEventFactory()
    dates = list(event.dates.all())

    refused = desk_client.post(
        f"/admin/events/specialevent/{event.pk}/change/",
        event_form(event, dates, starts_at="19:00", ends_at="18:00"),
    )
    saved = desk_client.post(
        f"/admin/events/specialevent/{event.pk}/change/",
        event_form(event, dates, starts_at="19:00", ends_at="21:30"),
    )

    assert refused.status_code == 200 and b"ends after it starts" in refused.content
    assert saved.status_code == 302
    event.refresh_from_db()
    assert (event.starts_at, event.ends_at) == (dt.time(19), dt.time(21, 30))
