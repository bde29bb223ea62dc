"""The door page in Chromium: an order's code admits its tickets in one scan, codes are read
forgivingly, and the phone's camera reads a ticket's QR code (Chromium's fake camera, fed a video
of the code made here)."""

import re
import time

import pytest
import qrcode
from django.utils import timezone
from PIL import Image
from playwright.sync_api import expect

from museum.accounts import create_account
from orders import tokens
from orders.models import Ticket
from orders.services.sale import place_order
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, PHONE, csp_watched, screenshot
from tests.factories import PASSWORD, MuseumDayFactory, partner_member

pytestmark = pytest.mark.needs_tool("chromium")


@pytest.fixture
def desk(db):
    create_account(username="desk", password=PASSWORD, staff=True)
    MuseumDayFactory(date=timezone.localdate())


def family(adults: int, children: int):
    return place_order(
        buyer=partner_member(username="family"),
        email="family@example.com",
        ticket_type="general",
        ticket_date=timezone.localdate(),
        lines=[
            {"category": "adult", "quantity": adults},
            {"category": "child", "quantity": children},
        ],
    )


def tickets_of(order) -> list[Ticket]:
    return list(Ticket.objects.filter(order=order).order_by("confirmation_code"))


def open_door(page) -> None:
    page.goto("/admin/login/?next=/door/")
    page.fill("#id_username", "desk")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page).to_have_url(re.compile(r"/door/$"))
    expect(page.locator("#scanned")).to_be_focused()


def scan(page, text: str) -> None:
    signals = page.evaluate("Number(document.body.dataset.signals || 0)")
    page.keyboard.type(text)  # a keyboard-wedge scanner types into what has focus
    page.keyboard.press("Enter")
    # Each answer is signalled once (beep, vibration): the verdict on screen is this scan's.
    expect(page.locator("body")).to_have_attribute("data-signals", str(signals + 1))


def test_an_orders_code_admits_its_valid_tickets_and_lists_the_refused(page, desk):
    order = family(adults=2, children=1)
    first, second, third = tickets_of(order)
    Ticket.objects.filter(pk=second.pk).update(cancelled_at=timezone.now())
    open_door(page)
    url = page.url

    scan(page, order.confirmation_code)

    verdict = page.locator("#verdict")
    expect(verdict.locator("> .word")).to_have_text("ADMIT")
    expect(verdict.locator("> .why")).to_have_text("Welcome: 2 of 3 tickets admitted")
    expect(page.locator("body")).to_have_attribute("data-signal", "admit")
    expect(page.locator("#order-code")).to_have_text(order.confirmation_code)
    lines = page.locator("#order-tickets li")
    expect(lines).to_have_count(3)
    # The admitted first, then the refused.
    expect(lines.nth(2)).to_have_attribute("data-code", second.confirmation_code)
    expect(lines.nth(2)).to_contain_text("REFUSE")
    expect(lines.nth(2)).to_contain_text("Cancelled ticket")
    for ticket in (first, third):
        line = page.locator(f'#order-tickets li.admit[data-code="{ticket.confirmation_code}"]')
        expect(line).to_contain_text("ADMIT")
        if ticket.category.check_at_door:  # the child's
            expect(line).to_contain_text("Check proof of age/status")
    expect(page.locator("#admitted-today")).to_have_text("2")
    expect(page.locator("#scanned")).to_be_focused()
    expect(page.locator("#scanned")).to_have_value("")
    assert page.url == url  # answered in place: the camera, if on, keeps running

    scan(page, order.confirmation_code)

    expect(verdict.locator("> .word")).to_have_text("REFUSE")
    expect(page.locator("body")).to_have_attribute("data-signal", "refuse")
    # Said as what it is (two visitors inside), not as the cancelled ticket's refusal.
    expect(verdict.locator("> .why")).to_contain_text("Already checked in: 2 of 3, at ")
    expect(page.locator("#order-tickets li.refuse")).to_have_count(3)
    assert Ticket.objects.filter(order=order, checked_in_at__isnull=False).count() == 2


def test_codes_are_read_forgivingly_and_unknown_text_is_no_forgery(page, desk):
    ticket, other = tickets_of(family(adults=2, children=0))
    open_door(page)

    # Upper case, no prefix, spaces around: the ticket's code all the same.
    body = ticket.confirmation_code.removeprefix("ticket-general-")
    scan(page, f"  {body.upper()} ")
    expect(page.locator("#verdict > .word")).to_have_text("ADMIT")
    expect(page.locator("#verdict")).to_contain_text(ticket.confirmation_code)

    scan(page, other.confirmation_code.upper())
    expect(page.locator("#verdict > .word")).to_have_text("ADMIT")

    scan(page, "not a ticket")
    expect(page.locator("#verdict > .word")).to_have_text("REFUSE")
    expect(page.locator("#verdict > .why")).to_have_text(
        "Unknown code: no ticket or order has this code"
    )

    scan(page, tokens.PREFIX + "A" * 118)
    expect(page.locator("#verdict > .why")).to_have_text("Forged, or not our ticket")
    expect(page.locator("#admitted-today")).to_have_text("2")


def y4m_of(image: Image.Image, *, frames: int = 2) -> bytes:
    """A YUV4MPEG2 video of `image` standing still: 4:2:0, its grey levels as luma, no colour."""
    width, height = 640, 480
    still = Image.new("L", (width, height), 255)
    picture = image.convert("L")
    picture.thumbnail((height - 40, height - 40))
    still.paste(picture, ((width - picture.width) // 2, (height - picture.height) // 2))
    frame = b"FRAME\n" + still.tobytes() + bytes([128]) * (width * height // 2)
    return f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420jpeg\n".encode() + frame * frames


def test_the_camera_reads_a_tickets_qr_code_and_admits_it(browser, desk, live_server, tmp_path):
    ticket = tickets_of(family(adults=1, children=0))[0]
    token = tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date)
    code = qrcode.make(token, border=4).get_image()
    video = tmp_path / "ticket.y4m"
    video.write_bytes(y4m_of(code))
    # A browser of its own: the fake camera is chosen when Chromium starts.
    camera = browser.browser_type.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=[
            *CHROMIUM_ARGS,
            "--use-fake-device-for-media-stream",
            "--use-fake-ui-for-media-stream",
            f"--use-file-for-fake-video-capture={video}",
        ],
    )
    try:
        context = camera.new_context(base_url=live_server.url, viewport=PHONE)
        context.set_default_timeout(10_000)
        page = context.new_page()
        refused = []
        page.on(
            "console",
            lambda message: (
                refused.append(message.text) if "Content Security Policy" in message.text else None
            ),
        )
        open_door(page)

        page.click("#camera-start")

        expect(page.locator("#camera-video")).to_be_visible()
        expect(page.locator("#verdict > .word")).to_have_text("ADMIT", timeout=20_000)
        expect(page.locator("#verdict")).to_contain_text(ticket.confirmation_code)
        expect(page.locator("body")).to_have_attribute("data-signal", "admit")
        # The code stays in view: it is not scanned again (which would answer REFUSE) while
        # the camera reads ten more frames.
        frames = "Number(document.getElementById('camera').dataset.frames)"
        read, deadline = page.evaluate(frames), time.monotonic() + 10
        while page.evaluate(frames) < read + 10:
            assert time.monotonic() < deadline, "the camera stopped reading frames"
            page.wait_for_timeout(50)
        expect(page.locator("body")).to_have_attribute("data-signals", "1")
        page.click("#camera-stop")
        expect(page.locator("#camera-video")).to_be_hidden()
        assert refused == []
    finally:
        camera.close()
    ticket.refresh_from_db()
    assert ticket.checked_in_by.username == "desk"


def test_the_camera_stays_in_view_after_a_familys_verdict_and_a_rescan_says_inside(
    browser, desk, live_server, tmp_path
):
    order = family(adults=2, children=2)
    video = tmp_path / "order.y4m"
    video.write_bytes(y4m_of(qrcode.make(order.confirmation_code, border=4).get_image()))
    camera = browser.browser_type.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=[
            *CHROMIUM_ARGS,
            "--use-fake-device-for-media-stream",
            "--use-fake-ui-for-media-stream",
            f"--use-file-for-fake-video-capture={video}",
        ],
    )
    try:
        context = camera.new_context(base_url=live_server.url, viewport=PHONE)
        context.set_default_timeout(10_000)
        page = context.new_page()
        with csp_watched(page):
            open_door(page)
            page.click("#camera-start")

            verdict = page.locator("#verdict")
            expect(verdict.locator("> .why")).to_have_text(
                "Welcome: 4 of 4 tickets admitted", timeout=20_000
            )
            # Read now, while the verdict is shown and no scan is under way: once it clears, the
            # camera's looping picture may scan again at any time, and on SQLite's shared cache a
            # read during that request's write fails at once (tests/browser/conftest.py).
            last = max(t.checked_in_at for t in tickets_of(order))
            # The verdict lies over the camera's view, which stays on the phone's screen.
            expect(page.locator("#camera-video")).to_be_in_viewport()
            expect(verdict).to_be_in_viewport()
            screenshot(page, "door-family")
            # And clears itself: the next visitor's code is shown to a free view.
            expect(verdict).to_have_count(0, timeout=10_000)

            page.locator("#scanned").fill(order.confirmation_code.upper())
            page.keyboard.press("Enter")
            expect(verdict.locator("> .why")).to_have_text(
                f"Already checked in: 4 of 4, at {timezone.localtime(last):%H:%M}"
            )
            expect(page.locator("#camera-video")).to_be_in_viewport()
            screenshot(page, "door-rescan")
    finally:
        camera.close()
