"""Staff set the membership types in the admin (in every language, audited) and read the
memberships, their sales, visits and walk-ins there, never changing them past the services."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from audit.models import Action, AuditRecord
from orders.models import MemberEntry, Membership, MembershipSaleKind, MembershipType
from tests.factories import OrderFactory, TicketFactory, days_from_today
from tests.orders.test_membership_reports import member, sale

TYPES = "/admin/orders/membershiptype/"
MEMBERSHIPS = "/admin/orders/membership/"
ENTRIES = "/admin/orders/memberentry/"


def type_form(**changes) -> dict:
    return {
        "code": "family",
        "name_en": "Family",
        "name_fr": "Famille",
        "description_en": "Two adults and up to four children.",
        "description_fr": "Deux adultes et jusqu'à quatre enfants.",
        "price": "120.00",
        "tax_rate": "0",
        "validity_months": "12",
        "admits": "6",
        "event_discount_percent": "10",
        "active": "on",
        "ordering": "2",
    } | changes


@pytest.fixture
def family(db):
    return MembershipType.objects.create(
        code="family", name="Family", name_fr="Famille", price=Decimal("120"), admits=6
    )


def test_staff_add_a_type_in_two_languages_and_the_addition_is_recorded(desk_client):
    answer = desk_client.post(f"{TYPES}add/", type_form())

    assert answer.status_code == 302
    kind = MembershipType.objects.get(code="family")
    with translation.override("fr"):
        assert (kind.name, kind.admits, kind.event_discount_percent) == ("Famille", 6, 10)
    created = AuditRecord.objects.get(action=Action.CREATED, object_type="orders.membershiptype")
    assert created.actor_name == "desk" and created.changes["price"] == "120.00"


def test_a_price_change_is_recorded_and_shown_in_the_types_history(desk_client, family):
    answer = desk_client.post(f"{TYPES}{family.pk}/change/", type_form(price="130.00"))

    assert answer.status_code == 302
    change = AuditRecord.objects.get(action=Action.CHANGED, object_id=str(family.pk))
    assert change.actor_name == "desk" and change.changes["price"] == ["120.00", "130.00"]
    page = desk_client.get(f"{TYPES}{family.pk}/change/")
    assert change.request_id.encode() in page.content


def test_a_types_code_stays_as_integrators_know_it_and_a_type_is_never_deleted(desk_client, family):
    desk_client.post(f"{TYPES}{family.pk}/change/", type_form(code="household"))

    assert MembershipType.objects.get(pk=family.pk).code == "family"
    assert desk_client.post(f"{TYPES}{family.pk}/delete/", {"post": "yes"}).status_code == 403
    assert MembershipType.objects.filter(pk=family.pk).exists()


def test_the_types_list_counts_members_valid_today(desk_client, family):
    year = {"since": days_from_today(-10), "until": days_from_today(300)}
    member(family, **year)
    member(family, **year)
    member(family, since=days_from_today(-400), until=days_from_today(-35))

    answer = desk_client.get(TYPES)

    [kind] = answer.context["cl"].result_list
    assert kind.members == 2


def test_staff_find_memberships_by_name_email_card_code_and_gift_code(desk_client, family):
    year = {"since": days_from_today(-10), "until": days_from_today(300)}
    ada = member(family, holder_name="Ada Lovelace", **year)
    grace = member(family, holder_name="Grace Hopper", **year)
    gift = member(family, status="pending", holder_name="", gift_code="GIFT-7K2M-9Q4B")

    def found(query: str) -> set:
        answer = desk_client.get(MEMBERSHIPS, {"q": query})
        return {shown.pk for shown in answer.context["cl"].result_list}

    assert found("lovelace") == {ada.pk}
    assert found(grace.email) == {grace.pk}
    assert found(ada.card_code) == {ada.pk}
    assert found("GIFT-7K2M-9Q4B") == {gift.pk}
    assert "(gift, not redeemed)" in desk_client.get(MEMBERSHIPS).content.decode()


def test_memberships_filter_by_status_type_and_validity_ending(desk_client, family):
    individual = MembershipType.objects.create(code="individual", name="Individual", price=60)
    soon = member(family, since=days_from_today(-300), until=days_from_today(5))
    this_month = member(individual, since=days_from_today(-300), until=days_from_today(20))
    lapsed = member(family, since=days_from_today(-400), until=days_from_today(-2))
    cancelled = member(
        family, status="cancelled", since=days_from_today(-9), until=days_from_today(3)
    )

    def shown(**query) -> set:
        answer = desk_client.get(MEMBERSHIPS, query)
        return {row.pk for row in answer.context["cl"].result_list}

    assert shown(expiring="7") == {soon.pk}
    assert shown(expiring="30") == {soon.pk, this_month.pk}
    assert shown(expiring="lapsed") == {lapsed.pk}
    assert shown(status__exact="cancelled") == {cancelled.pk}
    assert shown(membership_type__id__exact=individual.pk) == {this_month.pk}
    page = desk_client.get(MEMBERSHIPS).content.decode()
    assert "Expired" in page  # the lapsed one, whether or not the sweep marked it


def test_a_membership_is_read_with_its_sales_visits_and_walk_ins_and_never_changed(
    desk_client, family
):
    membership = member(family, since=days_from_today(-10), until=days_from_today(300))
    bought = sale(membership, MembershipSaleKind.NEW, confirmed=days_from_today(-10))
    visit = OrderFactory(membership=membership, date=days_from_today(-2), total=0)
    TicketFactory(order=visit, date=visit.date, member=True, price=0)
    MemberEntry.objects.create(membership=membership, date=days_from_today(-1), people=4)

    page = desk_client.get(f"{MEMBERSHIPS}{membership.pk}/change/").content.decode()

    assert bought.order.confirmation_code in page and "New membership" in page
    assert visit.confirmation_code in page
    assert "walk-ins" in page.lower()
    changed = desk_client.post(
        f"{MEMBERSHIPS}{membership.pk}/change/", {"holder_name": "Someone else"}
    )
    assert changed.status_code == 403
    assert (
        desk_client.post(f"{MEMBERSHIPS}{membership.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    assert Membership.objects.get(pk=membership.pk).holder_name == membership.holder_name
    assert desk_client.get(f"{MEMBERSHIPS}add/").status_code == 403


def test_no_action_on_memberships_bypasses_the_services(desk_client, family, admin_client):
    member(family, since=days_from_today(-10), until=days_from_today(300))

    for client in (desk_client, admin_client):
        answer = client.get(MEMBERSHIPS)
        assert answer.status_code == 200
        # Replacing a lost card is the one action, through its service (reissue_card).
        actions = answer.context["cl"].model_admin.get_actions(answer.wsgi_request)
        assert list(actions) == ["reissue_cards"]


def test_a_membership_orders_page_shows_the_period_it_sells(desk_client, family):
    membership = member(family, since=days_from_today(-10), until=days_from_today(300))
    bought = sale(membership, MembershipSaleKind.GIFT, confirmed=days_from_today(-10))

    page = desk_client.get(f"/admin/orders/order/{bought.order.pk}/change/").content.decode()

    assert membership.card_code in page and "Gift membership" in page


def test_member_entries_are_listed_and_only_read(desk_client, family):
    membership = member(
        family, holder_name="Ada Lovelace", since=days_from_today(-10), until=days_from_today(300)
    )
    entry = MemberEntry.objects.create(membership=membership, date=days_from_today(0), people=3)

    listed = desk_client.get(ENTRIES, {"q": membership.card_code})

    assert list(listed.context["cl"].result_list) == [entry]
    assert "Ada Lovelace" in listed.content.decode()
    assert desk_client.get(f"{ENTRIES}add/").status_code == 403
    assert desk_client.post(f"{ENTRIES}{entry.pk}/change/", {"people": "9"}).status_code == 403


def test_the_memberships_list_and_page_read_a_fixed_number_of_queries(desk_client, family):
    def page_queries(membership) -> list[int]:
        counts = []
        for url in (MEMBERSHIPS, f"{MEMBERSHIPS}{membership.pk}/change/"):
            with CaptureQueriesContext(connection) as queries:
                assert desk_client.get(url).status_code == 200
            counts.append(len(queries))
        return counts

    def add_one():
        membership = member(family, since=days_from_today(-30), until=days_from_today(300))
        sale(membership, MembershipSaleKind.NEW, confirmed=days_from_today(-30))
        visit = OrderFactory(membership=membership, date=days_from_today(-2), total=0)
        TicketFactory(order=visit, date=visit.date, member=True, price=0)
        MemberEntry.objects.create(membership=membership, date=days_from_today(-1), people=2)
        return membership

    first = add_one()
    few = page_queries(first)
    for _ in range(4):
        add_one()
    sale(first, MembershipSaleKind.RENEWAL, confirmed=days_from_today(-1))
    OrderFactory(membership=first, date=days_from_today(-5), total=0)
    MemberEntry.objects.create(membership=first, date=days_from_today(-6), people=1)

    assert page_queries(first) == few
