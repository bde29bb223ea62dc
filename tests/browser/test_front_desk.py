"""The front desk in Chromium: a family sold for cash, its tickets printed, moved to another
slot and cancelled with the cash paid out."""

import datetime as dt
import urllib.request

import pytest
from playwright.sync_api import expect

from hours.models import EntrySlot
from museum.accounts import DESK_GROUP, create_account, role_group
from orders.models import Order
from tests.factories import PASSWORD, MuseumDayFactory
from tests.orders.conftest import later

pytestmark = pytest.mark.needs_tool("chromium")


def desk_clerk():
    user = create_account(username="clerk", password=PASSWORD)
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.groups.add(role_group(DESK_GROUP))


def test_a_cash_sale_printed_moved_and_cancelled_at_the_desk(page, live_server):
    desk_clerk()
    day = MuseumDayFactory(date=later())
    for hour in (10, 11):
        EntrySlot.objects.create(day=day, entry_time=dt.time(hour), capacity=10)

    page.goto("/admin/login/?next=/desk/sell/")
    page.fill("#id_username", "clerk")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator(".slots")).to_contain_text("closed on this day")  # today: no museum day
    page.fill("#id_ticket_date", day.date.isoformat())
    page.dispatch_event("#id_ticket_date", "change")
    # The picker follows the day: its slots, the first with room chosen.
    expect(page.locator(".slots input[value='10:00']")).to_be_checked()
    expect(page.locator(".slots label", has_text="11:00")).to_contain_text("10 places left")
    page.fill("#id_qty_adult", "2")
    page.fill("#id_qty_child", "1")
    page.click("button[name=price]")
    expect(page.locator("#quote")).to_contain_text("37.50")
    page.fill("#id_tendered", "40")
    page.click("#sell")
    expect(page.locator(".messages")).to_contain_text("Change to give: €2.50")
    expect(page.locator("#status")).to_have_text("Confirmed")

    pdf_url = page.locator("#print").get_attribute("href")
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())
    request = urllib.request.Request(live_server.url + pdf_url, headers={"Cookie": cookies})
    with urllib.request.urlopen(request, timeout=10) as printed:
        assert printed.headers["Content-Type"] == "application/pdf"
        assert printed.read().startswith(b"%PDF")

    page.check("#move input[name=entry_time][value='11:00']")
    page.click("#move button")
    expect(page.locator(".messages")).to_contain_text("Moved")
    expect(page.locator("#visit")).to_contain_text("entry from 11:00")

    page.click("#cancel-order")
    expect(page.locator("#amount-back")).to_have_text("Goes back to the visitor: €37.50 in cash")
    page.click("#confirm")
    expect(page.locator(".messages .payout")).to_have_text("Pay out €37.50 in cash")
    expect(page.locator("#status")).to_have_text("Cancelled")
    assert Order.objects.get().status == "cancelled"
    assert [s.sold for s in EntrySlot.objects.order_by("entry_time")] == [0, 0]
