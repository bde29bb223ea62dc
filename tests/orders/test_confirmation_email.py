"""The confirmation email's content: plain text and HTML, the tickets per category in the order's
language, the tickets' PDF and the visit as a calendar entry in the museum's zone."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from icalendar import Calendar

from orders.models import Order
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, SpecialEventFactory
from tests.orders.conftest import later, order_body
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, pdf_text

pytestmark = pytest.mark.django_db(transaction=True)

ORDERS = "/v1.1/orders"
VISIT = dt.date(2030, 6, 12)  # a Wednesday


@pytest.fixture
def amsterdam(settings):
    settings.TIME_ZONE = "Europe/Amsterdam"
    settings.MUSEUM_NAME = "Rijksmuseum Test"
    settings.MUSEUM_ADDRESS = "Museumstraat 1, Amsterdam"


def mailed(client, body: dict):
    answer = client.post(ORDERS, body, format="json")
    assert answer.status_code == 201
    run_task_worker()
    [message] = mail.outbox
    return Order.objects.get(pk=answer.json()["orderId"]), message


def calendar_of(message) -> Calendar:
    [ics] = [content for name, content, kind in message.attachments if kind == "text/calendar"]
    return Calendar.from_ical(ics)


@NEEDS_POPPLER
def test_the_email_has_text_html_the_pdf_and_the_visit_in_the_calendar(visitor_client, amsterdam):
    day = MuseumDayFactory(date=VISIT, opens_at=dt.time(10), closes_at=dt.time(17))
    day.slots.create(entry_time=dt.time(10, 30), capacity=10)
    body = order_body(VISIT, ("adult", 2), ("child", 1), entryTime="10:30")

    order, message = mailed(visitor_client, body)

    assert message.subject == "Your 3 tickets for general entry on Wednesday 12 Jun 2030"
    [(html, kind)] = message.alternatives
    assert kind == "text/html"
    for part in (message.body, html):
        assert "Rijksmuseum Test" in part and order.confirmation_code in part
        assert "Wednesday 12 Jun 2030, entry from 10:30" in part  # 24-hour, day before month
        assert "2 × Adult" in part and "1 × Child" in part
        assert "Total" in part and "€37.50" in part  # the CLDR's British way
        assert "Tuesday 11 Jun 2030, 10:30" in part  # the cancellation deadline, a day before
    assert "Total: €37.50\n" in message.body and "<table" in html
    [pdf] = [content for _, content, kind in message.attachments if kind == "application/pdf"]
    assert pdf_text(pdf).count(" of 3 · Order ") == 3

    [visit] = calendar_of(message).walk("VEVENT")
    amsterdam_zone = ZoneInfo("Europe/Amsterdam")
    assert visit.get("DTSTART").params["TZID"] == "Europe/Amsterdam"
    assert visit.decoded("DTSTART") == dt.datetime(2030, 6, 12, 10, 30, tzinfo=amsterdam_zone)
    assert visit.decoded("DTEND") == dt.datetime(2030, 6, 12, 17, tzinfo=amsterdam_zone)
    assert str(visit.get("UID")) == str(order.pk)
    assert "Rijksmuseum Test" in str(visit.get("LOCATION"))
    [zone] = calendar_of(message).walk("VTIMEZONE")
    assert str(zone.get("TZID")) == "Europe/Amsterdam"


def test_an_event_without_a_slot_runs_from_opening_to_closing(visitor_client, amsterdam):
    MuseumDayFactory(date=later(), opens_at=dt.time(9), closes_at=dt.time(18))
    event = SpecialEventFactory(name="Night tour", dates=[later()])
    body = order_body(later(), ticketType="event", eventId=str(event.pk))

    order, message = mailed(visitor_client, body)

    assert "Visit: Night tour\n" in message.body and ", open 09:00–18:00\n" in message.body
    [visit] = calendar_of(message).walk("VEVENT")
    assert visit.decoded("DTSTART").time() == dt.time(9)
    assert visit.decoded("DTEND").time() == dt.time(18)
    assert str(visit.get("SUMMARY")) == "Night tour, Rijksmuseum Test"


@NEEDS_POPPLER
def test_a_german_order_is_confirmed_in_german(visitor_client, amsterdam):
    MuseumDayFactory(date=VISIT, opens_at=dt.time(10), closes_at=dt.time(17))
    body = order_body(VISIT, ("adult", 2), ("child", 1), language="de")

    order, message = mailed(visitor_client, body)

    assert message.subject == (
        "Ihre 3 Tickets für den allgemeinen Eintritt am Mittwoch, 12. Juni 2030"
    )
    [(html, _)] = message.alternatives
    for part in (message.body, html):
        assert "Mittwoch, 12. Juni 2030, geöffnet 10:00–17:00" in part
        assert "2 × Erwachsene" in part and "37,50\xa0€" in part  # the category's German name
        assert "Dienstag, 11. Juni 2030, 00:00" in part  # the cancellation deadline
    assert "Vielen Dank für Ihre Bestellung bei Rijksmuseum Test." in message.body
    assert "Gesamt: 37,50\xa0€\n" in message.body and '<html lang="de">' in html
    [visit] = calendar_of(message).walk("VEVENT")
    assert str(visit.get("SUMMARY")) == "Allgemeiner Eintritt, Rijksmuseum Test"
    description = str(visit.get("DESCRIPTION"))
    assert description.startswith(f"Bestellung {order.confirmation_code}: 3 Tickets.")
    [pdf] = [content for _, content, kind in message.attachments if kind == "application/pdf"]
    assert pdf_text(pdf).count(" von 3 · Bestellung ") == 3
