"""The front desk's members, through Django's test client: selling a membership paid in cash
with its change, a gift, renewing one, finding a member by a messy card code, name or email,
the member's page (status, validity, type, recent visits), printing the card, and booking a
member visit in a slot with the picker."""

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.utils import timezone

from hours.models import EntrySlot
from museum.accounts import DESK_GROUP, create_account, role_group
from orders import tokens
from orders.models import (
    MemberEntry,
    Membership,
    MembershipSale,
    MembershipSaleKind,
    MembershipStatus,
    Order,
    OrderKind,
    OrderStatus,
    PaymentState,
)
from tests.factories import (
    PASSWORD,
    MembershipFactory,
    MembershipTypeFactory,
    MuseumDayFactory,
    OrderFactory,
    door_member,
)
from tests.orders.conftest import later
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, page_png
from tests.qr import qr_texts


@pytest.fixture
def desk(client, db):
    """A browser session of a member of the Front desk group."""
    user = create_account(username="clerk", password=PASSWORD)
    user.is_staff = True
    user.save()
    user.groups.add(role_group(DESK_GROUP))
    client.force_login(user)
    return client


@pytest.fixture
def family(db):
    return MembershipTypeFactory(code="family", price=Decimal("120"), admits=4)


def membership_sale(**fields) -> dict:
    return {
        "membership_type": "",
        "holder_name": "Ada Lovelace",
        "email": "ada@example.com",
        "language": "en",
        "payment": "cash",
        "tendered": "150",
        **fields,
    }


# Finding and seeing a member: this branch's own.


def test_the_desk_finds_a_member_by_a_messy_card_code_and_opens_them(desk, family):
    member = MembershipFactory(membership_type=family, card_code="member-2k7m9q-x4b1c")
    MembershipFactory(membership_type=family, holder_name="Grace Hopper", email="g@example.com")

    answer = desk.get("/desk/members/", {"q": "  MEMBER 2K7M9Q X4B1C "})

    assert answer.status_code == 302 and answer["Location"] == f"/desk/members/{member.pk}/"


@pytest.mark.parametrize("query", ["lovelace", "ADA@example.com"])
def test_the_desk_finds_members_by_name_or_email(desk, family, query):
    ada = MembershipFactory(membership_type=family)
    MembershipFactory(membership_type=family, holder_name="Ada Lovelace", email="ada@example.com")
    MembershipFactory(membership_type=family, holder_name="Grace Hopper", email="g@example.com")

    page = desk.get("/desk/members/", {"q": query}).content.decode()

    assert page.count("Ada Lovelace") == 2 and "Grace Hopper" not in page
    assert ada.card_code in page


def test_nobody_found_says_so(desk, family):
    page = desk.get("/desk/members/", {"q": "nobody"}).content.decode()

    assert "No member found." in page


def test_the_members_page_shows_status_validity_type_and_recent_visits(desk, family):
    member = MembershipFactory(
        membership_type=family,
        valid_from=timezone.localdate() - dt.timedelta(days=10),
        valid_until=timezone.localdate() + dt.timedelta(days=355),
    )
    MemberEntry.objects.create(membership=member, date=timezone.localdate(), people=3)

    page = desk.get(f"/desk/members/{member.pk}/").content.decode()

    assert "Ada Lovelace" in page and member.card_code in page
    assert 'id="membership-type">Family (4 a visit)' in page
    assert 'id="member-status">active' in page
    assert f"{member.valid_until:%-d %B %Y}" in page
    assert "At the door" in page and "<td>3</td>" in page
    assert 'id="print-card"' in page


def test_a_lapsed_membership_reads_expired(desk, family):
    member = MembershipFactory(
        membership_type=family,
        valid_from=timezone.localdate() - dt.timedelta(days=400),
        valid_until=timezone.localdate() - dt.timedelta(days=35),
    )

    page = desk.get(f"/desk/members/{member.pk}/").content.decode()

    assert 'id="member-status">expired' in page


@NEEDS_POPPLER
def test_the_desk_prints_the_card(desk, family):
    member = MembershipFactory(membership_type=family)

    answer = desk.get(f"/desk/members/{member.pk}/card.pdf")

    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf"
    [token] = qr_texts(page_png(answer.content, 1))
    assert tokens.verify_member_card_token(token).membership_id == member.pk


def test_a_pending_membership_has_no_card_at_the_desk_either(desk, family):
    member = MembershipFactory(
        membership_type=family, status=MembershipStatus.PENDING, valid_from=None, valid_until=None
    )

    page = desk.get(f"/desk/members/{member.pk}/").content.decode()
    answer = desk.get(f"/desk/members/{member.pk}/card.pdf", follow=True)

    assert 'id="print-card"' not in page and "not paid yet" in page
    assert answer.redirect_chain == [(f"/desk/members/{member.pk}/", 302)]
    assert "not paid yet" in answer.content.decode()


def test_the_desks_page_of_a_membership_sale_leads_to_the_member(desk, family):
    member = MembershipFactory(membership_type=family)
    order = OrderFactory(
        ticket_type=OrderKind.MEMBERSHIP, total=family.price, date=member.valid_from
    )
    MembershipSale.objects.create(
        order=order, membership=member, kind=MembershipSaleKind.NEW, price=family.price
    )

    page = desk.get(f"/desk/orders/{order.pk}/").content.decode()

    assert f'href="/desk/members/{member.pk}/">{member.card_code}</a>' in page
    assert 'id="print"' not in page  # no tickets: the card admits
    assert order.confirmation_code in desk.get(f"/desk/members/{member.pk}/").content.decode()


def test_the_members_pages_need_the_desks_permissions(client, family):
    member = MembershipFactory(membership_type=family)
    client.force_login(door_member(username="doorkeeper"))

    for path in ("/desk/members/", f"/desk/members/{member.pk}/", "/desk/members/sell/"):
        assert client.get(path).status_code == 403


def test_no_such_member_is_404(desk, db):
    assert desk.get("/desk/members/4b7f6a8e-0000-4000-8000-000000000000/").status_code == 404


# Selling and renewing: orders.services.memberships.sell_membership and renew_membership (helper
# msale's branch).


def test_a_membership_sold_for_cash_says_the_change_and_is_active_at_once(desk, family):
    answer = desk.post(
        "/desk/members/sell/", membership_sale(membership_type=family.pk), follow=True
    )

    member = Membership.objects.get()
    page = answer.content.decode()
    assert member.status == MembershipStatus.ACTIVE and member.holder_name == "Ada Lovelace"
    assert member.valid_from == timezone.localdate()
    assert answer.redirect_chain[-1][0] == f"/desk/members/{member.pk}/"
    assert "Change to give: €30.00" in page and member.card_code in page
    order = member.sales.get().order
    assert order.status == OrderStatus.CONFIRMED and order.total == Decimal("120")
    [payment] = order.payments.all()
    assert (payment.provider, payment.info, payment.state) == (
        "desk",
        "cash",
        PaymentState.CONFIRMED,
    )


def test_cash_short_of_the_price_sells_no_membership(desk, family):
    answer = desk.post(
        "/desk/members/sell/", membership_sale(membership_type=family.pk, tendered="100")
    )

    assert answer.status_code == 200 and b"Less than what is due" in answer.content
    assert not Membership.objects.exists() and not Order.objects.exists()


def test_a_gift_sold_at_the_desk_shows_its_gift_code(desk, family):
    answer = desk.post(
        "/desk/members/sell/",
        membership_sale(membership_type=family.pk, gift="on", holder_name="", payment="card"),
        follow=True,
    )

    gift = Membership.objects.get()
    assert gift.gift_code and gift.gift_code in answer.content.decode()
    assert "not redeemed" in answer.content.decode()  # no card until it is


def test_a_membership_without_a_holder_is_told_in_a_clerks_words(desk, family):
    answer = desk.post(
        "/desk/members/sell/", membership_sale(membership_type=family.pk, holder_name="")
    )

    assert answer.status_code == 200 and not Membership.objects.exists()
    assert "name" in answer.content.decode()


def test_the_desk_renews_a_membership_from_the_day_after_it_ends(desk, family):
    member = MembershipFactory(membership_type=family, valid_until=later(20))

    answer = desk.post(f"/desk/members/{member.pk}/renew", {"payment": "card"}, follow=True)

    member.refresh_from_db()
    assert member.valid_until > later(20)  # the renewal, paid, adds its period
    renewal = member.sales.get(kind="renewal").order
    assert renewal.status == OrderStatus.CONFIRMED and renewal.date == later(21)
    assert f"Renewed from {later(21).isoformat()}" in answer.content.decode()


def test_selling_a_membership_needs_its_permission(client, family):
    clerk = create_account(username="seller", password=PASSWORD)
    clerk.is_staff = True
    clerk.save()
    desk_only = role_group(DESK_GROUP)
    clerk.groups.add(desk_only)
    client.force_login(clerk)
    assert client.get("/desk/members/sell/").status_code == 200
    desk_only.permissions.remove(*desk_only.permissions.filter(codename="sell_memberships"))
    client.force_login(clerk)  # the permissions read again

    assert client.get("/desk/members/sell/").status_code == 403


# A member visit: place_order with `membership` and member lines (helper mvisit's branch).


def test_the_desk_books_a_member_visit_in_a_slot_with_the_picker(desk, family):
    member = MembershipFactory(membership_type=family)
    day = MuseumDayFactory(date=later(), opens_at=dt.time(10), closes_at=dt.time(17))
    for entry in (dt.time(10), dt.time(11)):
        EntrySlot.objects.create(day=day, entry_time=entry, capacity=4)

    page = desk.get(f"/desk/members/{member.pk}/").content.decode()
    # The picker of the day chosen, as the page's script swaps it in.
    slots = desk.get("/desk/slots/", {"ticket_date": day.date.isoformat()}).content.decode()
    answer = desk.post(
        f"/desk/members/{member.pk}/visit",
        {"ticket_date": day.date.isoformat(), "entry_time": "11:00", "people": "3"},
        follow=True,
    )

    assert 'class="slots"' in page and 'id="id_ticket_date"' in page  # the picker's form
    assert 'name="entry_time" value="11:00"' in slots
    visit = Order.objects.get(membership=member)
    assert answer.redirect_chain[-1][0] == f"/desk/orders/{visit.pk}/"
    assert visit.status == OrderStatus.CONFIRMED and visit.total == 0
    assert visit.slot.entry_time == dt.time(11) and visit.tickets.count() == 3
    assert all(ticket.member for ticket in visit.tickets.all())
    members_page = desk.get(f"/desk/members/{member.pk}/").content.decode()
    assert visit.confirmation_code in members_page and "entry from 11:00" in members_page


def test_a_member_visit_beyond_admits_is_refused_in_a_clerks_words(desk, family):
    member = MembershipFactory(membership_type=family)
    day = MuseumDayFactory(date=later(), opens_at=dt.time(10), closes_at=dt.time(17))
    EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=10)

    answer = desk.post(
        f"/desk/members/{member.pk}/visit",
        {"ticket_date": day.date.isoformat(), "entry_time": "10:00", "people": "5"},
    )

    assert answer.status_code == 200 and not Order.objects.exists()
    assert re.search(r'<li class="[^"]*error">', answer.content.decode())  # the refusal, said
