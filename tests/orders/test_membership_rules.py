"""A membership's life, closed (issue 46): another account's membership reads as unknown before
any rule speaks of it, the mailbox limit across accounts, a holder's name that shows, a redeemed
gift that is its holder's, the event discount for `admits` people, and personal data gone from
memberships never paid and from their kept cards; a lost card replaced."""

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from django.core import mail
from django.utils import timezone

from orders import tokens
from orders.models import (
    ANONYMISED_EMAIL,
    MemberEntry,
    Membership,
    MembershipCard,
    MembershipStatus,
    MembershipType,
    Order,
    OrderStatus,
    Refund,
    ReplacedCard,
)
from orders.services.holds import release_expired_holds
from orders.services.personal_data import anonymise_old_memberships
from tests.conftest import assert_problem, client_for, run_task_worker
from tests.factories import (
    MuseumDayFactory,
    SpecialEventFactory,
    UserFactory,
    partner_member,
    staff_member,
)
from tests.live_http import in_parallel, post, sign_in
from tests.member_visits import membership
from tests.orders.conftest import later, order_body
from tests.orders.test_memberships_renewal import at

MEMBERSHIPS = "/v1.1/memberships"


@pytest.fixture
def individual(db):
    return MembershipType.objects.create(
        code="individual", name_en="Individual", price=Decimal("60.00"), admits=1
    )


def buy(client, code="individual", **extra):
    body = {"membershipType": code, "holderName": "Ada Lovelace", "email": "ada@example.com"}
    return client.post(MEMBERSHIPS, {**body, **extra}, format="json")


# 1. Another account's membership is unknown, whatever else is wrong with the request.


@pytest.fixture
def others(db):
    """Another account's dual membership (it admits 2), lapsed a year ago."""
    owner = UserFactory(username="someone", email="someone@example.com")
    lapsed = later(-400)
    return membership(buyer=owner, admits=2, discount=20, valid_from=lapsed)


def test_anothers_membership_is_unknown_before_any_rule_speaks_of_it(
    online_client, others, timed_day
):
    event_day = later(10)
    event = SpecialEventFactory(dates=[event_day])
    requests = [
        # Too many member places for its type: no "admits at most 2".
        order_body(timed_day.date, ("member", 3), entryTime="10:00"),
        # Member places on an event: no "members pay less", which tells its type has a discount.
        {
            "ticketType": "event",
            "eventId": str(event.pk),
            "ticketDate": event_day.isoformat(),
            "email": "ada@example.com",
            "lines": [{"category": "member", "quantity": 1}],
        },
        # Lapsed: no `validUntil`.
        order_body(timed_day.date, ("member", 1), entryTime="10:00"),
        # No member line at all.
        order_body(timed_day.date, ("adult", 1), entryTime="10:00"),
    ]
    for body in requests:
        for reference in (str(others.pk), others.card_code):
            for dry_run in (False, True):
                response = online_client.post(
                    "/v1.1/orders",
                    {**body, "membership": reference, "dryRun": dry_run},
                    format="json",
                )
                problem = assert_problem(response, 404)
                assert problem["reason"] == "unknown_membership", (body, dry_run)
                assert "validUntil" not in problem and "errors" not in problem


def test_one_ticket_of_a_membership_order_is_not_found_and_nothing_is_cancelled(
    visitor_client, staff_client, individual
):
    sold = buy(visitor_client).json()
    order = sold["orderId"]
    for client in (visitor_client, staff_client):
        for ticket in (uuid.uuid4(), sold["membershipId"]):
            answer = client.post(f"/v1.1/orders/{order}/tickets/{ticket}/cancel", {}, format="json")
            assert assert_problem(answer, 404)["status"] == 404
    assert Membership.objects.get().status == MembershipStatus.ACTIVE
    assert Order.objects.get(pk=order).status == OrderStatus.CONFIRMED
    assert not Refund.objects.exists()


# 2. One mailbox's memberships are counted across accounts.


def test_one_mailbox_collects_at_most_the_limit_from_any_number_of_accounts(
    online_client, individual, settings
):
    settings.MUSEUM_MAX_MEMBERSHIPS_PER_DAY = 3
    # A partner's sales on account to the mailbox do not count toward its limit.
    partner = client_for(partner_member(username="partner"))
    for _ in range(3):
        assert buy(partner, email="victim@example.com").status_code == 201
    assert buy(online_client, email="victim@example.com").status_code == 201
    second = client_for(UserFactory(username="second"))
    for spelled in ("Victim+a@example.com", "victim+b@EXAMPLE.com"):
        assert buy(second, email=spelled).status_code == 201

    third = client_for(UserFactory(username="third"))
    problem = assert_problem(buy(third, email="victim@example.com"), 429)
    assert problem["code"] == "too_many_memberships" and problem["limit"] == 3
    assert "email address" in problem["detail"]
    # The third account itself is within its limit, for another mailbox.
    assert buy(third, email="someone.else@example.com").status_code == 201
    # And the account's own limit still counts whatever mailboxes it buys for.
    assert buy(second, email="third@example.com").status_code == 201
    refused = assert_problem(buy(second, email="fourth@example.com"), 429)
    assert "account" in refused["detail"]


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_accounts_racing_for_one_mailbox_get_at_most_the_limit(live_server, individual, settings):
    settings.MUSEUM_MAX_MEMBERSHIPS_PER_DAY = 3
    for n in range(6):
        UserFactory(username=f"racer{n}")
        sign_in(live_server.url, username=f"racer{n}")
    names = iter(range(6))

    def buy_one():
        body = {"membershipType": "individual", "holderName": "Ada", "email": "victim@example.com"}
        return post(f"{live_server.url}{MEMBERSHIPS}", body, f"racer{next(names)}")

    statuses = sorted(status for status, _ in in_parallel(6, buy_one))
    assert statuses == [201] * 3 + [429] * 3
    assert Membership.objects.count() == 3


# 3. A holder's name shows.

INVISIBLE_NAMES = ["\u200b", "\u200b\u200c\u200d\u2060\ufeff", " \u200b \u00a0", "\u3164", "\u0301"]


@pytest.mark.parametrize("name", INVISIBLE_NAMES)
def test_a_holder_name_of_invisible_characters_alone_is_refused_when_sold(
    visitor_client, individual, name
):
    problem = assert_problem(buy(visitor_client, holderName=name), 400)
    assert "holderName" in problem["errors"]
    assert not Membership.objects.exists()


@pytest.mark.parametrize("name", INVISIBLE_NAMES)
def test_a_holder_name_of_invisible_characters_alone_is_refused_when_a_gift_is_redeemed(
    visitor_client, online_client, individual, name
):
    gift = buy(visitor_client, gift=True, holderName="").json()
    body = {"giftCode": gift["giftCode"], "holderName": name, "email": "bo@example.com"}

    problem = assert_problem(online_client.post(f"{MEMBERSHIPS}/redeem", body, format="json"), 400)

    assert "holderName" in problem["errors"]
    assert Membership.objects.get().redeemed_at is None


def test_the_desk_cannot_sell_to_an_invisible_name(client, individual):
    client.force_login(staff_member(username="clerk"))
    sale = {
        "membership_type": individual.pk,
        "holder_name": "\u200b\u2060",
        "email": "ada@example.com",
        "language": "en",
        "payment": "cash",
        "tendered": "100",
    }

    answer = client.post("/desk/members/sell/", sale)

    assert answer.status_code == 200 and "is required" in answer.content.decode()
    assert not Membership.objects.exists()


def test_invisible_characters_around_a_name_are_not_kept_an_accent_is(visitor_client, individual):
    answer = buy(visitor_client, holderName="\u200b\ufeffRene\u0301 Magritte\u200b ")

    assert answer.status_code == 201, answer.json()
    assert answer.json()["holderName"] == "Rene\u0301 Magritte"


# 4. A redeemed gift is its holder's.


@pytest.mark.django_db(transaction=True)
def test_a_redeemed_gift_is_cancelled_only_by_staff_and_its_holder_is_told(
    visitor_client, online_client, staff_client, individual, settings
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    gift = buy(visitor_client, gift=True, holderName="", email="giver@example.com").json()
    redeemed = online_client.post(
        f"{MEMBERSHIPS}/redeem",
        {"giftCode": gift["giftCode"], "holderName": "Ada", "email": "ada@example.com"},
        format="json",
    )
    assert redeemed.status_code == 200, redeemed.json()
    run_task_worker()
    mail.outbox.clear()

    refused = visitor_client.post(f"/v1.1/orders/{gift['orderId']}/cancel", {}, format="json")

    assert assert_problem(refused, 409)["code"] == "gift_redeemed"
    assert Membership.objects.get().status == MembershipStatus.ACTIVE
    assert not Refund.objects.exists()

    cancelled = staff_client.post(f"/v1.1/orders/{gift['orderId']}/cancel", {}, format="json")

    assert cancelled.status_code == 200, cancelled.json()
    assert Membership.objects.get().status == MembershipStatus.CANCELLED
    run_task_worker()
    to_holder = [message for message in mail.outbox if message.to == ["ada@example.com"]]
    assert len(to_holder) == 1 and gift["cardCode"] in to_holder[0].body
    assert "cancelled" in to_holder[0].subject


# 5. The event discount is for the people the membership admits.


def test_the_event_discount_is_for_as_many_tickets_as_the_membership_admits(
    online_client, online_visitor
):
    day = later(10)
    event = SpecialEventFactory(price=Decimal("20.00"), dates=[day])
    dual = membership(buyer=online_visitor, admits=2, discount=25)
    body = {
        "ticketType": "event",
        "eventId": str(event.pk),
        "ticketDate": day.isoformat(),
        "email": "ada@example.com",
        "lines": [{"category": "adult", "quantity": 3}, {"category": "child", "quantity": 1}],
        "membership": str(dual.pk),
    }

    quote = online_client.post("/v1.1/orders", {**body, "dryRun": True}, format="json")
    response = online_client.post("/v1.1/orders", body, format="json")

    # Two adults at 20.00 less 25 %; the third adult and the child (half of 20.00) at full price.
    assert quote.status_code == 200, quote.json()
    lines = [(line["category"], line["quantity"], line["price"]) for line in quote.json()["lines"]]
    assert lines == [("adult", 2, 15), ("adult", 1, 20), ("child", 1, 10)]
    assert quote.json()["total"] == 60
    assert response.status_code == 201, response.json()
    order = response.json()
    assert order["total"] == 60
    prices = sorted((ticket["category"], ticket["price"]) for ticket in order["tickets"])
    assert prices == [("adult", 15), ("adult", 15), ("adult", 20), ("child", 10)]


# 6. Personal data: memberships never paid, and the kept cards.


def test_a_membership_never_paid_is_anonymised_after_the_retention_period(
    online_client, individual, settings
):
    settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS = 30
    unpaid = buy(online_client, holderName="Grace", email="grace@example.com").json()
    assert unpaid["status"] == "pending"
    Order.objects.filter(pk=unpaid["orderId"]).update(
        hold_expires_at=timezone.now() - dt.timedelta(minutes=1)
    )
    assert release_expired_holds() == 1
    assert Order.objects.get(pk=unpaid["orderId"]).status == OrderStatus.EXPIRED
    # Held still, or bought within the period, it is kept.
    held = buy(online_client, holderName="Ada").json()
    today = timezone.localdate()

    with at(today + dt.timedelta(days=30)):
        assert anonymise_old_memberships() == 0
    with at(today + dt.timedelta(days=31)):
        assert anonymise_old_memberships() == 1
        assert anonymise_old_memberships() == 0

    grace = Membership.objects.get(pk=unpaid["membershipId"])
    assert (grace.holder_name, grace.email) == ("anonymised", ANONYMISED_EMAIL)
    assert grace.status == MembershipStatus.PENDING
    assert Membership.objects.get(pk=held["membershipId"]).holder_name == "Ada"


def test_a_cancelled_membership_keeps_no_card(visitor_client, individual):
    sold = buy(visitor_client).json()
    assert visitor_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}/card.png").status_code == 200
    assert MembershipCard.objects.filter(membership_id=sold["membershipId"]).exists()

    cancelled = visitor_client.post(f"/v1.1/orders/{sold['orderId']}/cancel", {}, format="json")

    assert cancelled.status_code == 200, cancelled.json()
    assert not MembershipCard.objects.exists()


def test_an_anonymised_membership_keeps_no_card(visitor_client, individual, settings):
    settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS = 30
    sold = buy(visitor_client).json()
    assert visitor_client.get(f"{MEMBERSHIPS}/{sold['membershipId']}/card.pdf").status_code == 200
    end = dt.date.fromisoformat(sold["validUntil"])

    with at(end + dt.timedelta(days=31)):
        assert anonymise_old_memberships() == 1

    assert not MembershipCard.objects.exists()


# 7. A lost card replaced.


def door_scan(client, scanned: str, **form) -> str:
    response = client.post("/door/", {"scanned": scanned, **form})
    assert response.status_code == 200
    return response.content.decode()


def test_a_replaced_cards_token_and_code_are_refused_at_the_door(desk_client):
    MuseumDayFactory(date=timezone.localdate())  # no slots: the card admits walk-ins
    member = membership(admits=2, holder_name="Grace Hopper")
    old_token = tokens.sign_member_card(membership_id=member.pk, issued_on=timezone.localdate())
    old_code = member.card_code

    listed = desk_client.post(
        "/admin/orders/membership/",
        {"action": "reissue_cards", "_selected_action": [str(member.pk)]},
        follow=True,
    )

    assert listed.status_code == 200
    member.refresh_from_db()
    assert member.card_code != old_code and member.card_code in listed.content.decode()
    assert ReplacedCard.objects.get().card_code == old_code
    for scanned in (old_token, old_code, old_code.upper().replace("-", " ")):
        page = door_scan(desk_client, scanned)
        assert 'class="verdict refuse"' in page and "Replaced card" in page, scanned
        assert "Forged" not in page and "Unknown" not in page
    assert not MemberEntry.objects.exists()
    # The new card admits, by its token and by its code.
    new_token = tokens.sign_member_card(
        membership_id=member.pk, issued_on=timezone.localdate(), secret=member.card_secret
    )
    assert 'class="verdict admit"' in door_scan(desk_client, new_token, people=1)
    assert 'class="verdict admit"' in door_scan(desk_client, member.card_code, people=1)
    assert MemberEntry.objects.count() == 2
    # The card the API draws now is the new one's.
    assert tokens.verify_member_card_token(new_token, secret=member.card_secret)
    with pytest.raises(tokens.InvalidTicketToken):
        tokens.verify_member_card_token(old_token, secret=member.card_secret)


def test_a_card_is_replaced_only_by_staff_who_sell_memberships_and_only_with_a_card(
    client, desk_client
):
    from orders.exceptions import NoMembershipCard
    from orders.services.member_cards import reissue_card

    member = membership()
    client.force_login(UserFactory(username="looker", is_staff=True))
    client.post(
        "/admin/orders/membership/",
        {"action": "reissue_cards", "_selected_action": [str(member.pk)]},
    )
    assert not ReplacedCard.objects.exists()
    pending = membership(status=MembershipStatus.PENDING)
    with pytest.raises(NoMembershipCard):
        reissue_card(membership=pending, by=member.buyer)
