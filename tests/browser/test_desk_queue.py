"""The front desk for a queue, in Chromium on a desktop and a tablet: the slot picker, a family
paid in cash with the keyboard alone, cancelling asked first with the payout shown, a school
class, and an order found by a code read out badly."""

import datetime as dt
import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from hours.models import EntrySlot
from museum.accounts import DESK_GROUP, create_account, role_group
from orders.models import Order, Ticket
from tests.browser.conftest import DESKTOP, TABLET, screenshot
from tests.factories import PASSWORD, MuseumDayFactory

pytestmark = pytest.mark.needs_tool("chromium")


@pytest.fixture(params=[DESKTOP, TABLET], ids=["desktop", "tablet"])
def viewport(request):
    return request.param


@pytest.fixture
def morning(time_machine):
    """Today at 10:30 in the museum, with a day of four slots: 09:00's sale is over, 10:00's
    sold out, 11:00 has 6 places of 8 and 12:00 is unlimited."""
    # 10:30 today, or tomorrow late at night: the browser keeps a session cookie of 12 hours.
    now = timezone.localtime()
    day = now.date() if now.hour < 22 else now.date() + dt.timedelta(days=1)
    time_machine.move_to(timezone.make_aware(dt.datetime.combine(day, dt.time(10, 30))))
    museum_day = MuseumDayFactory(date=day)
    for hour, capacity, sold in ((9, 10, 0), (10, 4, 4), (11, 8, 2), (12, None, 0)):
        EntrySlot.objects.create(
            day=museum_day, entry_time=dt.time(hour), capacity=capacity, sold=sold
        )
    return museum_day


def open_desk(page, then: str = "/desk/sell/") -> None:
    user = create_account(username="clerk", password=PASSWORD)
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.groups.add(role_group(DESK_GROUP))
    page.goto(f"/admin/login/?next={then}")
    page.fill("#id_username", "clerk")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


class Keys:
    """The keys a test presses, counted."""

    def __init__(self, page):
        self.page, self.count = page, 0

    def press(self, *keys: str) -> None:
        for key in keys:
            self.count += 1
            self.page.keyboard.press(key)


def test_a_family_paid_in_cash_takes_few_keys_and_no_mouse(page, morning, viewport):
    open_desk(page)
    keys = Keys(page)

    # The slot picker: places left, the past and sold-out slots closed, 11:00 chosen.
    slot = page.locator(".slots input[name=entry_time]")
    expect(slot).to_have_count(4)
    expect(page.locator(".slots input[value='09:00']")).to_be_disabled()
    expect(page.locator(".slots input[value='10:00']")).to_be_disabled()
    expect(page.locator(".slots label", has_text="10:00")).to_contain_text("sold out")
    expect(page.locator(".slots input[value='11:00']")).to_be_checked()
    expect(page.locator(".slots label", has_text="11:00")).to_contain_text("6 places left")
    expect(page.locator("#id_qty_adult")).to_be_focused()

    keys.press("2", "Tab", "2")
    expect(page.locator("#total")).to_have_text("45.00")
    while not page.evaluate("document.activeElement.id === 'id_tendered'"):
        keys.press("Tab")
        assert keys.count < 12, "the amount handed over is too many Tabs away"
    keys.press("5", "0")
    expect(page.locator("#change")).to_have_text("5.00")
    if viewport == DESKTOP:
        screenshot(page, "desk-sale", full_page=True)
    keys.press("Enter")

    expect(page.locator(".messages")).to_contain_text("Change to give: €5.00")
    expect(page.locator("#paid-how")).to_have_text("Paid at the desk (cash)")
    expect(page.locator("#visit")).to_contain_text("entry from 11:00")
    expect(page.locator("#print")).to_be_focused()
    with page.context.expect_page() as printed:
        keys.press("Enter")
    printed.value.close()
    expect(page.locator("#next-sale")).to_be_focused()
    keys.press("Enter")
    expect(page.locator("#id_qty_adult")).to_be_focused()

    print(f"a family of four paid in cash: {keys.count} keys")
    assert keys.count <= 20, f"{keys.count} keys"
    order = Order.objects.get()
    assert (order.total, order.slot.entry_time) == (45, dt.time(11))
    # 6 places left at 11:00 before this sale: 2 now.
    expect(page.locator(".slots label", has_text="11:00")).to_contain_text("2 places left")


@pytest.mark.parametrize("viewport", [TABLET], ids=["tablet"])
def test_cancelling_asks_first_and_shows_the_payout(page, morning, viewport):
    open_desk(page)
    page.fill("#id_qty_adult", "1")
    page.fill("#id_qty_child", "1")
    page.fill("#id_tendered", "30")
    page.click("#sell")
    expect(page.locator("#status")).to_have_text("Confirmed")

    page.locator("#tickets tr", has_text="Child").locator("a.cancel-ticket").click()

    expect(page.locator("h2")).to_contain_text("Cancel ticket ticket-general-")
    expect(page.locator("#amount-back")).to_have_text("Goes back to the visitor: €7.50 in cash")
    assert not Ticket.objects.filter(cancelled_at__isnull=False).exists()
    screenshot(page, "desk-cancel")
    page.click("#confirm")

    payout = page.locator(".messages .payout")
    expect(payout).to_have_text("Pay out €7.50 in cash")
    # The text is there once the document is parsed, the desk's stylesheet only once it loaded.
    page.wait_for_load_state("load")
    assert float(payout.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 30
    screenshot(page, "desk-payout")
    expect(page.locator("#tickets tr", has_text="Child")).to_contain_text("Cancelled")


@pytest.mark.parametrize("viewport", [TABLET], ids=["tablet"])
def test_a_school_class_of_25_is_sold_at_the_desk(page, morning, viewport):
    open_desk(page)
    page.check(".slots input[value='12:00']")  # 11:00 has 6 places left
    page.fill("#id_qty_student", "25")
    expect(page.locator("#total")).to_have_text("250.00")
    page.click("input[name=payment][value=card]")
    page.click("#sell")

    expect(page.locator("#status")).to_have_text("Confirmed")
    expect(page.locator("#paid-how")).to_have_text("Paid at the desk (card terminal)")
    expect(page.locator("#tickets tbody tr")).to_have_count(25)
    expect(page.locator("#visit")).to_contain_text("entry from 12:00")


@pytest.mark.parametrize("viewport", [TABLET], ids=["tablet"])
def test_the_desk_finds_an_order_by_a_messy_code(page, morning, viewport):
    open_desk(page)
    page.fill("#id_qty_adult", "2")
    page.click("#sell")
    expect(page.locator("#status")).to_have_text("Confirmed")
    order = Order.objects.get()
    Order.objects.filter(pk=order.pk).update(confirmation_code="order-01x2y3-z4910")
    page.goto("/desk/")
    screenshot(page, "desk-today")

    page.fill("#q", "  o1X2Y3 z49IO ")
    page.keyboard.press("Enter")

    expect(page).to_have_url(re.compile(rf"/desk/orders/{order.pk}/$"))
    expect(page.locator("h2")).to_have_text("Order order-01x2y3-z4910")
