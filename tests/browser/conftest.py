"""A real browser for the desk: Debian's Chromium driven by Playwright, against live_server.

A test touches the database only while none of its page's requests is under way, that is after an
`expect` of the page's answer: on SQLite the test and live_server's thread share one in-memory
database through SQLite's shared cache, whose table locks fail a read during another connection's
write at once ("database table is locked"), without waiting for the busy timeout."""

import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from scripts.test_tools import find_tool

# Debian's /usr/bin/chromium; the tests here are `needs_tool("chromium")`, skipped without it.
CHROMIUM = find_tool("chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PHONE = {"width": 390, "height": 844}  # the door page is used on a phone
TABLET = {"width": 820, "height": 1180}  # the desk: a tablet on the counter, or a desktop
DESKTOP = {"width": 1280, "height": 800}
# The pictures of docs/staff.md, taken by the tests when MUSEUM_SCREENSHOTS=1 (and only then, so
# that a test run leaves the committed files alone).
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


def screenshot(page, name: str, *, full_page: bool = False) -> None:
    if os.environ.get("MUSEUM_SCREENSHOTS") == "1":
        page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=full_page)


@contextmanager
def csp_watched(page):
    """Fails if the page broke its Content-Security-Policy meanwhile (Chromium reports each
    script, style or image it blocked)."""
    refused: list[str] = []
    page.on(
        "console",
        lambda message: (
            refused.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    yield
    assert refused == [], "the page broke its Content-Security-Policy"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    # Keeps each phase's report on the test, so `page` knows at teardown whether it failed.
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="module")
def browser():
    # Playwright's sync API keeps an event loop in this thread, and Django refuses database
    # calls from a thread with a running loop unless told that is safe. It is: the loop only
    # drives the browser, and the test's own queries run between its calls.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            yield browser
            browser.close()


@pytest.fixture
def viewport():
    """The screen `page` has: a phone's, unless a module says otherwise."""
    return PHONE


@pytest.fixture
def page(browser, live_server, request, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    context.set_default_timeout(10_000)
    page = context.new_page()
    with csp_watched(page):
        yield page
    report = getattr(request.node, "report_call", None)
    if report is None or report.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"{request.node.name}.png", full_page=True)
    context.close()
