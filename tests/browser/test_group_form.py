"""The public group form in Chromium, in German (the browser's language): a school asks for its
class's visit without an account and sees the German confirmation with its request's code."""

import pytest
from playwright.sync_api import expect

from groups.models import GroupRequest, GroupStatus
from museum import i18n
from museum.i18n import day_in_words
from tests.browser.conftest import csp_watched
from tests.groups.conftest import (
    ahead,
    chaperones,  # noqa: F401 (a fixture)
    group_day,  # noqa: F401 (a fixture: a day 30 days ahead)
    pupil,  # noqa: F401 (a fixture)
    teacher,  # noqa: F401 (a fixture)
)

pytestmark = [
    pytest.mark.needs_tool("chromium"),
    pytest.mark.usefixtures("pupil", "teacher", "chaperones", "group_day"),
]


@pytest.fixture
def page(browser, live_server, viewport):
    """A German browser (Accept-Language: de)."""
    context = browser.new_context(base_url=live_server.url, viewport=viewport, locale="de-DE")
    context.set_default_timeout(10_000)
    page = context.new_page()
    with csp_watched(page):
        yield page
    context.close()


def test_a_school_asks_for_its_visit_in_german(page):
    day = ahead(30)
    page.goto("/groups/")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    page.fill("#id_organisation", "Schiller-Gymnasium")
    page.select_option("#id_organisation_kind", "school")
    page.fill("#id_age_group", "Klasse 7")
    page.fill("#id_people_pupil", "28")
    page.fill("#id_people_teacher", "3")
    page.fill("#id_date", day.isoformat())
    page.fill("#id_contact_name", "Frau Weber")
    page.fill("#id_email", "weber@schiller.example")
    page.click("#group-request button[type=submit]")

    outcome = page.locator("#outcome")
    expect(outcome).to_be_visible()
    group = GroupRequest.objects.get()
    with i18n.speaking("de"):
        when = day_in_words(day)
    expect(outcome).to_have_text(f"Vielen Dank: Wir haben Ihre Anfrage {group.code} erhalten.")
    expect(page.locator("main")).to_contain_text(when)  # "Dienstag 29. Dezember 2026"
    expect(page.locator("html")).to_have_attribute("lang", "de")
    assert (group.language, group.status, group.headcount) == ("de", GroupStatus.REQUESTED, 31)
