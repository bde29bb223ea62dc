"""The order's email: plain text and HTML, the tickets per category in the order's language, the
tickets' PDF and the visit as a calendar entry in the museum's zone; sent again after a move or a
cancellation with what was paid, what goes back and what stays valid; how to cancel, and never a
deadline already past."""

import datetime as dt
import re
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.utils import timezone
from icalendar import Calendar

from orders import tokens
from orders.models import Order, VisitorCategory
from orders.services.changes import move_order
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, SpecialEventFactory, staff_member
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
        assert "2 Adults" in part and "1 Child (6-17)" in part
        assert "Total" in part and "€37.50" in part  # the CLDR's British way
        assert "Tuesday 11 Jun 2030, 10:30" in part  # the cancellation deadline, a day before
    assert "Total: €37.50\n" in message.body and "<table" in html
    pdf = pdf_of(message)
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
        assert "2 Erwachsene" in part and "37,50\xa0€" in part  # the category's German name
        assert "Dienstag, 11. Juni 2030, 00:00" in part  # the cancellation deadline
    assert "Vielen Dank für Ihre Bestellung bei Rijksmuseum Test." in message.body
    assert "Gesamt: 37,50\xa0€\n" in message.body and '<html lang="de">' in html
    [visit] = calendar_of(message).walk("VEVENT")
    assert str(visit.get("SUMMARY")) == "Allgemeiner Eintritt, Rijksmuseum Test"
    description = str(visit.get("DESCRIPTION"))
    assert description.startswith(f"Bestellung {order.confirmation_code}: 3 Tickets.")
    pdf = pdf_of(message)
    assert pdf_text(pdf).count(" von 3 · Bestellung ") == 3


# After a change the visitor is mailed again: what the order holds now, adding up.


def amounts(text: str, *labels: str) -> list[Decimal]:
    """The euro amounts after each label ("Total: €37.50") in an English email."""
    return [Decimal(re.search(rf"{label}: €([\d.]+)\n", text).group(1)) for label in labels]


def pdf_of(message) -> bytes:
    """The tickets' PDF, named by the order's code (its invoice or receipt is named by its own
    number)."""
    [pdf] = [content for name, content, _ in message.attachments if name.startswith("order-")]
    return pdf


@NEEDS_POPPLER
def test_a_partial_cancellation_mails_what_was_paid_goes_back_and_stays_valid(
    visitor_client, amsterdam
):
    MuseumDayFactory(date=VISIT, opens_at=dt.time(10), closes_at=dt.time(17))
    order, _ = mailed(visitor_client, order_body(VISIT, ("adult", 2), ("child", 1)))
    child = order.tickets.get(category__category="child")

    visitor_client.post(f"{ORDERS}/{order.pk}/tickets/{child.pk}/cancel")
    run_task_worker()

    [_, changed] = mail.outbox
    assert changed.subject == (
        f"Your order {order.confirmation_code} has changed: 2 tickets on Wednesday 12 Jun 2030"
    )
    body = changed.body
    assert "has changed. This is what it holds now" in body
    assert "  2 Adults at €15.00: €30.00\n  1 Child (6-17) at €7.50: €7.50\n" in body
    assert "Cancelled:\n  1 Child (6-17): €7.50 back\n" in body
    paid, back, valid = amounts(body, "Total", "Paid back", "Still valid")
    assert (paid, back, valid) == (Decimal("37.50"), Decimal("7.50"), Decimal("30.00"))
    assert paid - back == valid == sum(t.price for t in order.tickets.filter(cancelled_at=None))
    assert child.confirmation_code not in body.split("Ticket codes:")[1]
    [(html, _)] = changed.alternatives
    assert "€7.50 back" in html and "€30.00" in html
    pages = pdf_text(pdf_of(changed)).rstrip("\f").split("\f")
    assert len(pages) == 2 and not any("CANCELLED" in page for page in pages)


@NEEDS_POPPLER
def test_a_move_mails_the_tickets_for_the_new_day_and_slot(visitor_client, amsterdam):
    day = MuseumDayFactory(date=VISIT, opens_at=dt.time(10), closes_at=dt.time(17))
    day.slots.create(entry_time=dt.time(10, 30), capacity=10)
    other = MuseumDayFactory(date=VISIT + dt.timedelta(days=1), opens_at=dt.time(10))
    other.slots.create(entry_time=dt.time(14), capacity=10)
    order, _ = mailed(visitor_client, order_body(VISIT, ("adult", 2), entryTime="10:30"))

    move_order(order_id=order.pk, by=staff_member(), ticket_date=other.date, entry_time=dt.time(14))
    run_task_worker()

    [_, moved] = mail.outbox
    assert moved.subject == (
        f"Your order {order.confirmation_code} has changed: 2 tickets on Thursday 13 Jun 2030"
    )
    assert "Date: Thursday 13 Jun 2030, entry from 14:00\n" in moved.body
    assert "Total: €30.00\n" in moved.body and "Cancelled:" not in moved.body
    text = pdf_text(pdf_of(moved))
    assert text.count("Thursday 13 Jun 2030") >= 2 and "Entry from 14:00" in text
    assert "Entry from 10:30" not in text and "until Wednesday 12 Jun 2030, 14:00" in text
    [visit] = calendar_of(moved).walk("VEVENT")
    assert visit.decoded("DTSTART").date() == other.date
    assert str(visit.get("UID")) == str(order.pk)  # the calendar's entry is moved, not added


def test_an_order_bought_after_its_deadline_promises_no_cancelling(visitor_client, amsterdam):
    today = MuseumDayFactory(date=timezone.localdate())

    _, message = mailed(visitor_client, order_body(today.date))

    assert "The tickets of this order can no longer be cancelled online." in message.body
    assert "Until" not in message.body and "/orders/cancel/" not in message.body


def test_the_email_links_the_orders_cancel_page(visitor_client, amsterdam):
    MuseumDayFactory(date=VISIT)

    order, message = mailed(visitor_client, order_body(VISIT, ("adult", 1)))

    link = f"http://127.0.0.1:8000/orders/cancel/{tokens.sign_cancel_link(order_id=order.pk)}"
    assert (
        f"Until Tuesday 11 Jun 2030, 00:00 you can cancel tickets of this order on its page, and "
        f"get their price back: {link}." in message.body
    )
    [(html, _)] = message.alternatives
    assert f'<a href="{link}">{link}</a>' in html


def test_a_free_ticket_cancelled_is_told_without_money(visitor_client, amsterdam):
    MuseumDayFactory(date=VISIT)
    order, _ = mailed(visitor_client, order_body(VISIT, ("adult", 1), ("infant", 1)))
    infant = order.tickets.get(category__category="infant")

    visitor_client.post(f"{ORDERS}/{order.pk}/tickets/{infant.pk}/cancel")
    run_task_worker()

    body = mail.outbox[-1].body
    assert "Cancelled:\n  1 Infant (under 6)\n" in body
    assert "Paid back" not in body and "Still valid: €15.00\n" in body


def test_a_german_order_is_told_its_change_in_german_counting_right(visitor_client, amsterdam):
    MuseumDayFactory(date=VISIT)
    body = order_body(VISIT, ("adult", 2), ("child", 1), language="de")
    order, _ = mailed(visitor_client, body)
    adult = order.tickets.filter(category__category="adult").first()

    visitor_client.post(f"{ORDERS}/{order.pk}/tickets/{adult.pk}/cancel")
    run_task_worker()

    changed = mail.outbox[-1]
    assert changed.subject == (
        f"Ihre Bestellung {order.confirmation_code} wurde geändert: 2 Tickets am "
        "Mittwoch, 12. Juni 2030"
    )
    assert "  2 Erwachsene zu 15,00\xa0€: 30,00\xa0€\n" in changed.body
    assert "Storniert:\n  1 Erwachsener: 15,00\xa0€ zurück\n" in changed.body
    assert "Erstattet: 15,00\xa0€\nWeiterhin gültig: 22,50\xa0€\n" in changed.body


def test_the_email_says_the_tax_in_the_total_per_rate(visitor_client, amsterdam):
    for code, rate in (("adult", "9"), ("child", "21")):
        category = VisitorCategory.objects.get(category=code)
        category.tax_rate = rate
        category.save()  # as the admin does: the sale's kept categories are read again
    MuseumDayFactory(date=VISIT)

    _order, message = mailed(visitor_client, order_body(VISIT, ("adult", 2), ("child", 1)))

    [(html, _kind)] = message.alternatives
    assert "incl. 9 % tax: €2.48\n" in message.body and "incl. 21 % tax: €1.30\n" in message.body
    assert "incl. 9 % tax" in html and "€1.30" in html
