"""Text that would break a ticket: refused in names and locations, shown on one line if stored."""

import io
import sys
import unicodedata

import pytest
from django.core import mail
from PIL import Image

from events.models import SpecialEvent
from museum.text import BREAKING, BREAKING_BUT_LINES, one_line
from orders.models import Ticket
from tests.conftest import EVENT, assert_problem, buy_event_ticket, client_for, run_task_worker
from tests.factories import SpecialEventFactory, days_from_today, partner_member

INJECTED = "Night tour\r\nBcc: x@example.org"
BREAKERS = ["\r\nBcc: x@example.org", "\n", "\r", "\t", "\x0b", "\x1b[31m", "\x7f", "\x85"]
BREAKERS += ["\u2028", "\u2029"]


def test_the_rule_is_exactly_unicodes_controls_and_line_separators():
    breaking = {chr(c) for c in range(sys.maxunicode + 1) if BREAKING.fullmatch(chr(c))}
    categories = {"Cc", "Zl", "Zp"}

    assert {unicodedata.category(c) for c in breaking} == categories
    assert len(breaking) == 65 + 2  # every Cc, U+2028 and U+2029
    assert {c for c in breaking if not BREAKING_BUT_LINES.fullmatch(c)} == {"\n", "\r", "\t"}
    assert one_line(INJECTED) == "Night tour  Bcc: x@example.org"


@pytest.mark.parametrize("field", ["name", "location"])
@pytest.mark.parametrize("breaker", BREAKERS)
def test_names_and_locations_with_control_characters_are_refused_by_field(staff, field, breaker):
    event = SpecialEventFactory(dates=[days_from_today(3)])
    client = client_for(staff)

    created = client.post(
        "/v1.1/special-events", {**EVENT, field: f"Night{breaker}tour"}, format="json"
    )
    patched = client.patch(
        f"/v1.1/special-events/{event.pk}", {field: f"Night{breaker}tour"}, format="json"
    )

    for response in (created, patched):
        problem = assert_problem(response, 400)
        assert list(problem["errors"]) == [field]
        assert "control character" in problem["errors"][field][0]
    assert SpecialEvent.objects.count() == 1
    assert getattr(SpecialEvent.objects.get(), field) == getattr(event, field)


def test_a_description_keeps_its_lines_and_tabs_but_no_other_controls(staff):
    client = client_for(staff)
    text = "Line one\r\nline two\n\ttabbed"

    kept = client.post("/v1.1/special-events", {**EVENT, "eventDescription": text}, format="json")
    refused = client.post(
        "/v1.1/special-events", {**EVENT, "eventDescription": "bell\x07"}, format="json"
    )

    assert kept.status_code == 201 and kept.json()["eventDescription"] == text
    assert list(assert_problem(refused, 400)["errors"]) == ["eventDescription"]


def test_the_admin_form_refuses_a_name_with_a_line_break(desk_client):
    form = {
        "name_en": INJECTED,
        "location_en": "Garden\tEast",
        "description_en": "Fine\r\ntext.",
        "price": "8",
        "tax_rate": "0",
        "capacity": "",
        "dates-TOTAL_FORMS": "1",
        "dates-INITIAL_FORMS": "0",
        "dates-0-date": days_from_today(3).isoformat(),
    }

    response = desk_client.post("/admin/events/specialevent/add/", form)

    errors = response.context["adminform"].form.errors
    assert response.status_code == 200
    assert set(errors) == {"name_en", "location_en"}
    assert "U+000D" in errors["name_en"][0] and "U+0009" in errors["location_en"][0]
    assert not SpecialEvent.objects.exists()


@pytest.fixture
def stored_injection(db, settings):
    """An event saved with a line break in its name before names refused it, a ticket bought."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    event = SpecialEventFactory(name=INJECTED, location="Hall\r\n", dates=[days_from_today(3)])
    client = client_for(partner_member(username="buyer"))
    bought = buy_event_ticket(client, event, days_from_today(3))
    assert bought.status_code == 201
    return client, bought.json()["ticketId"]


def test_a_stored_line_break_still_draws_the_ticket(stored_injection, desk_client):
    client, ticket_id = stored_injection

    image = client.get(f"/v1.1/tickets/{ticket_id}/qr")
    page = desk_client.get(f"/admin/orders/ticket/{ticket_id}/change/")

    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(image.content)).format == "PNG"
    assert page.status_code == 200 and b"data:image/png;base64," in page.content


@pytest.mark.django_db(transaction=True)
def test_a_stored_line_break_is_sent_once_in_a_one_line_subject(stored_injection):
    client, ticket_id = stored_injection

    run_task_worker()
    run_task_worker()

    [email] = mail.outbox
    assert email.subject.startswith("Your 1 ticket for Night tour  Bcc: x@example.org on ")
    assert "\n" not in email.subject and "\r" not in email.subject
    assert email.recipients() == ["ada@example.com"] and not email.bcc
    assert "Visit: Night tour  Bcc: x@example.org\n" in email.body
    sent = Ticket.objects.select_related("order").get(pk=ticket_id).order
    assert sent.confirmation_sent_at is not None and sent.confirmation_task_id == ""
