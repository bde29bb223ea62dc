import datetime as dt
import json
import re
import urllib.request

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from museum.accounts import create_account
from orders.models import Ticket
from orders.services.sale import buy_ticket
from tests.conftest import basic_auth
from tests.factories import PASSWORD, MuseumDayFactory, partner_member
from tests.qr import qr_text
from tickets.images import ticket_image

pytestmark = pytest.mark.needs_tool("chromium")


def log_in(page, username: str, *, then: str) -> None:
    page.goto(f"/admin/login/?next={then}")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


def api_get(live_server, path: str, username: str):
    request = urllib.request.Request(
        live_server.url + path, headers={"Authorization": basic_auth(username)}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def ticket_qr_text(ticket: Ticket) -> str:
    return qr_text(bytes(ticket_image(ticket=ticket).png))


def test_staff_create_an_event_in_the_admin_and_the_api_lists_it(page, live_server):
    create_account(username="desk", password=PASSWORD, staff=True)
    first, second = (timezone.localdate() + dt.timedelta(days=n) for n in (1, 2))

    log_in(page, "desk", then="/admin/events/specialevent/add/")
    # The museum's own language's fields (English); the others are translations, left empty.
    page.fill("#id_name_en", "Lantern Night")
    page.fill("#id_location_en", "Sculpture Garden")
    page.fill("#id_description_en", "The garden by lantern light.")
    page.fill("#id_price", "9.50")
    page.fill("#id_capacity", "25")
    page.fill("#id_dates-0-date", first.isoformat())
    page.get_by_text("Add another Event date").click()
    page.fill("#id_dates-1-date", second.isoformat())
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")

    query = f"?startDate={first.isoformat()}&endDate={second.isoformat()}"
    events = api_get(live_server, f"/v1.1/special-events{query}", "desk")
    assert [(e["name"], e["dates"], e["capacity"]) for e in events] == [
        ("Lantern Night", [first.isoformat(), second.isoformat()], 25)
    ]


def test_a_fresh_ticket_is_admitted_once_at_the_door(page):
    create_account(username="desk", password=PASSWORD, staff=True)
    MuseumDayFactory(date=timezone.localdate())
    ticket = buy_ticket(
        buyer=partner_member(username="visitor"),
        ticket_type="general",
        ticket_date=timezone.localdate(),
        email="visitor@example.com",
    )
    token = ticket_qr_text(ticket)

    log_in(page, "desk", then="/door/")
    expect(page).to_have_url(re.compile(r"/door/$"))
    scanner_input = page.locator("#scanned")
    expect(scanner_input).to_be_focused()
    page.keyboard.type(token)  # a keyboard-wedge scanner types into what has focus
    page.keyboard.press("Enter")

    expect(page.locator("#verdict .word")).to_have_text("ADMIT")
    # The page's own style sheet and script load under its Content-Security-Policy.
    expect(page.locator("#verdict")).to_have_css("background-color", "rgb(11, 122, 53)")
    page.locator("#verdict .word").click()
    expect(page.locator("#scanned")).to_be_focused()
    expect(page.locator("#verdict")).to_contain_text(ticket.confirmation_code)
    expect(page.locator("#admitted-today")).to_have_text("1")
    expect(scanner_input).to_be_focused()
    expect(scanner_input).to_have_value("")

    page.keyboard.type(token)
    page.keyboard.press("Enter")

    expect(page.locator("#verdict .word")).to_have_text("REFUSE")
    # Read only once the page shows the answer: the server's claim is an UPDATE of the tickets,
    # and on SQLite's in-memory test database (one shared cache for both threads) a read while
    # that write is under way fails at once ("database table is locked"), whatever the timeout.
    ticket.refresh_from_db()
    first_entry = f"{timezone.localtime(ticket.checked_in_at):%H:%M}"
    expect(page.locator("#verdict .why")).to_have_text(f"Already checked in at {first_entry}")
    expect(page.locator("#admitted-today")).to_have_text("1")


def test_the_door_page_keeps_what_a_scanner_typed_while_it_loaded(page):
    # A fast scanner may type before the page's load event (and its pageshow) has fired; only a
    # page restored from the back/forward cache, holding the last scan, is emptied then.
    create_account(username="desk", password=PASSWORD, staff=True)
    log_in(page, "desk", then="/door/")
    expect(page).to_have_url(re.compile(r"/door/$"))
    expect(page.locator("#scanned")).to_be_focused()
    page.keyboard.type("ticket-general-")

    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: false}))")
    expect(page.locator("#scanned")).to_have_value("ticket-general-")

    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}))")
    expect(page.locator("#scanned")).to_have_value("")
    expect(page.locator("#scanned")).to_be_focused()


def test_a_visitor_cannot_open_the_door_page(page, live_server, client):
    visitor = partner_member(username="visitor")

    page.goto("/door/")
    expect(page).to_have_url(re.compile(r"/admin/login/\?next=/door/$"))
    log_in(page, "visitor", then="/door/")
    expect(page.locator(".errornote")).to_contain_text("staff account")

    # Signed in some other way, the visitor is still turned away.
    client.force_login(visitor)
    session = client.cookies["sessionid"].value
    page.context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
    response = page.goto("/door/")

    assert response.status == 403
    expect(page.locator("#scanned")).to_have_count(0)
