"""A member at the desk and at the door, in Chromium: the desk sells a membership paid in cash
and prints its card; the card's QR code, scanned at the door on a day without entry slots,
admits the member, and the door shows the holder's name for staff to check."""

import re
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from museum.accounts import create_account
from orders import membership_cards
from orders.models import Membership, MembershipStatus
from tests.browser.conftest import TABLET
from tests.browser.test_desk import log_in
from tests.browser.test_door_scan import scan
from tests.factories import PASSWORD, MembershipTypeFactory, MuseumDayFactory
from tests.qr import qr_text

pytestmark = pytest.mark.needs_tool("chromium")


@pytest.fixture
def viewport():
    return TABLET


def test_the_desk_sells_a_membership_and_its_card_admits_at_the_door(page, db):
    create_account(username="desk", password=PASSWORD, staff=True)
    MembershipTypeFactory(code="dual", name_en="Dual", price=Decimal("80"), admits=2)
    MuseumDayFactory(date=timezone.localdate())  # no entry slots: the card admits a walk-in

    log_in(page, "desk", then="/desk/members/sell/")
    page.select_option("#id_membership_type", label="Dual")
    page.fill("#id_holder_name", "Ada Lovelace")
    page.fill("#id_email", "ada@example.com")
    page.check("input[name=payment][value=cash]")
    page.fill("#id_tendered", "100")
    page.click("#sell-membership")

    expect(page).to_have_url(re.compile(r"/desk/members/[0-9a-f-]{36}/$"))
    expect(page.locator(".messages")).to_contain_text("Change to give: €20.00")
    expect(page.locator("#member-status")).to_have_text("active")
    membership = Membership.objects.get()
    assert membership.status == MembershipStatus.ACTIVE
    expect(page.locator("#card-code")).to_have_text(membership.card_code)
    with page.expect_popup() as printed:
        page.click("#print-card")
    assert printed.value.url.endswith(f"/desk/members/{membership.pk}/card.pdf")
    printed.value.close()

    # The card the member was handed, as the door's scanner reads its QR code.
    token = qr_text(membership_cards.card_png(membership))
    page.goto("/door/")
    expect(page.locator("#scanned")).to_be_focused()
    scan(page, token)

    verdict = page.locator("#verdict")
    expect(verdict.locator("> .word")).to_have_text("ADMIT")
    expect(verdict).to_contain_text("Ada Lovelace")
    assert membership.entries.get().date == timezone.localdate()
