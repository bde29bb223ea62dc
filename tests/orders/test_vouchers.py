"""Vouchers in the sale, through the orders API: their price effects, their scope, their uses and
budget, the places they keep, and a member's discount beside them."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from audit.models import Action, AuditRecord
from events.models import EventDate
from hours.models import EntrySlot, MuseumDay
from orders.models import Order, Ticket, VisitorCategory, Voucher
from orders.services.holds import release_expired_holds
from orders.services.vouchers import ALPHABET, given, new_code, recount
from tests.conftest import client_for
from tests.factories import MuseumDayFactory, SpecialEventFactory, staff_member
from tests.member_visits import membership
from tests.orders.conftest import later, order_body


def voucher(code: str = "SPRING", **fields) -> Voucher:
    categories = fields.pop("categories", ())
    found = Voucher.objects.create(code=code, **{"effect": "free", **fields})
    found.categories.set(VisitorCategory.objects.filter(category__in=categories))
    return found


@pytest.fixture
def partner_client(visitor_client):
    """A sales partner's: its orders are confirmed at once, paid on account."""
    return visitor_client


def test_each_price_effect_on_a_mixed_order(partner_client, open_day):
    voucher("FREE1", effect="free", categories=["adult"])
    voucher("SET5", effect="set_price", value=Decimal("5"))
    voucher("OFF4", effect="amount_off", value=Decimal("4"))
    voucher("PCT20", effect="percent_off", value=Decimal("20"))
    body = order_body(open_day.date)
    body["lines"] = [
        {"category": "adult", "quantity": 1, "voucher": "free1"},  # read case-insensitively
        {"category": "adult", "quantity": 1, "voucher": "SET5"},
        {"category": "child", "quantity": 2, "voucher": "OFF4"},
        {"category": "adult", "quantity": 1, "voucher": "PCT20"},
        {"category": "student", "quantity": 1},
    ]

    answer = partner_client.post("/v1.1/orders", body, format="json")

    assert answer.status_code == 201, answer.json()
    order = answer.json()
    paid = sorted((t["price"], t["discount"], t.get("voucher")) for t in order["tickets"])
    student = float(VisitorCategory.objects.get(category="student").general_price)
    assert paid == sorted(
        [
            (0, 15, "FREE1"),
            (5, 10, "SET5"),
            (3.5, 4, "OFF4"),
            (3.5, 4, "OFF4"),
            (12, 3, "PCT20"),
            (student, 0, None),
        ]
    )
    assert order["total"] == 0 + 5 + 3.5 + 3.5 + 12 + student
    # Without a limit, none is counted on its row: its tickets say what it gave.
    given_ = {v.code: (v.used, v.discounted, v.uses) for v in given(Voucher.objects.all())}
    assert given_ == {
        "FREE1": (1, Decimal("15.00"), 0),
        "SET5": (1, Decimal("10.00"), 0),
        "OFF4": (2, Decimal("8.00"), 0),
        "PCT20": (1, Decimal("3.00"), 0),
    }


def test_a_price_never_goes_below_nothing_nor_above_the_catalogues(partner_client, open_day):
    voucher("BIGOFF", effect="amount_off", value=Decimal("100"))
    voucher("DEAR", effect="set_price", value=Decimal("99"))
    body = order_body(open_day.date, ("child", 1), voucher="BIGOFF")
    cheap = partner_client.post("/v1.1/orders", body, format="json").json()
    body = order_body(open_day.date, ("adult", 1), voucher="DEAR")
    dear = partner_client.post("/v1.1/orders", body, format="json").json()

    assert cheap["total"] == 0 and cheap["tickets"][0]["discount"] == 7.5
    # No better than the catalogue: not used at all.
    assert dear["total"] == 15 and "voucher" not in dear["tickets"][0]
    assert Voucher.objects.get(code="DEAR").uses == 0


def test_the_orders_code_reduces_the_lines_in_its_scope_and_leaves_the_others(
    partner_client, open_day
):
    voucher("KIDS", effect="free", categories=["child"])
    body = order_body(open_day.date, ("adult", 1), ("child", 2), voucher="kids")

    order = partner_client.post("/v1.1/orders", body, format="json").json()

    assert order["total"] == 15
    assert given(Voucher.objects.all()).get().used == 2


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"valid_until": timezone.now() - dt.timedelta(minutes=1)}, "expired"),
        ({"valid_from": timezone.now() + dt.timedelta(days=1)}, "not_yet_valid"),
        ({"channels": ["desk", "octo"]}, "channel"),
        ({"categories": ["senior"]}, "category"),
        ({"ticket_type": "event"}, "ticket_type"),
        ({"visit_until": timezone.localdate()}, "date"),
        ({"entry_from": dt.time(10)}, "slot"),
    ],
)
def test_a_code_out_of_scope_is_refused_alike_and_staff_are_told_why(
    partner_client, open_day, fields, reason
):
    voucher("NOPE", **fields)
    body = order_body(open_day.date, ("adult", 1), voucher="NOPE")
    unknown = order_body(open_day.date, ("adult", 1), voucher="NOSUCHCODE")

    refused = partner_client.post("/v1.1/orders", body, format="json")
    never_issued = partner_client.post("/v1.1/orders", unknown, format="json")
    as_staff = client_for(staff_member(username="boss")).post(
        "/v1.1/orders", {**body, "dryRun": True}, format="json"
    )

    assert refused.status_code == never_issued.status_code == 409
    assert refused.json()["reason"] == never_issued.json()["reason"] == "voucher_not_applicable"
    assert refused.json()["detail"] == never_issued.json()["detail"]
    assert as_staff.status_code == 409
    assert as_staff.json()["detail"] != refused.json()["detail"]
    assert not Order.objects.exists()
    assert Voucher.objects.get().uses == 0
    assert reason  # the case's name


def test_a_member_discount_and_a_voucher_do_not_stack_unless_it_says_so(partner_client, visitor):
    day = later()
    MuseumDayFactory(date=day)
    event = SpecialEventFactory(price=Decimal("20"), dates=[day])
    member = membership(buyer=visitor, admits=4, discount=50)
    voucher("LESS25", effect="percent_off", value=Decimal("25"))  # 15 > the member's 10
    voucher("LESS75", effect="percent_off", value=Decimal("75"))  # 5 < 10
    voucher("STACK50", effect="percent_off", value=Decimal("50"), stacks=True)  # 10 then 5

    def bought(code: str) -> dict:
        body = order_body(day, ("adult", 1), voucher=code, membership=str(member.pk))
        body.update(ticketType="event", eventId=str(event.pk))
        answer = partner_client.post("/v1.1/orders", body, format="json")
        assert answer.status_code == 201, answer.json()
        Order.objects.filter(pk=answer.json()["orderId"]).update(membership=None)  # one a day
        return answer.json()["tickets"][0]

    member_price = bought("LESS25")
    assert (member_price["price"], member_price["discount"]) == (10, 0)
    assert "voucher" not in member_price
    assert (bought("LESS75")["price"], bought("LESS75")["discount"]) == (5, 15)
    assert (bought("STACK50")["price"], bought("STACK50")["discount"]) == (5, 5)
    assert Voucher.objects.get(code="LESS25").uses == 0


def test_uses_are_counted_per_ticket_and_a_hold_that_runs_out_gives_them_back(
    online_client, open_day
):
    voucher("THREE", effect="percent_off", value=Decimal("50"), max_uses=3)
    body = order_body(open_day.date, ("adult", 2), voucher="THREE")

    held = online_client.post("/v1.1/orders", body, format="json")
    too_many = online_client.post("/v1.1/orders", body, format="json")

    assert held.status_code == 201 and held.json()["status"] == "held"
    assert too_many.status_code == 409 and too_many.json()["reason"] == "voucher_used_up"
    assert Voucher.objects.get().uses == 2
    Order.objects.filter(pk=held.json()["orderId"]).update(
        hold_expires_at=timezone.now() - dt.timedelta(seconds=1)
    )

    assert release_expired_holds() == 1
    assert Voucher.objects.get().uses == 0
    assert Voucher.objects.get().discount_given == 0
    assert online_client.post("/v1.1/orders", body, format="json").status_code == 201


def test_a_cancelled_ticket_gives_its_use_and_discount_back(partner_client, open_day):
    voucher("ONCE", effect="free", max_uses=1)
    order = partner_client.post(
        "/v1.1/orders", order_body(open_day.date, ("adult", 1), voucher="ONCE"), format="json"
    ).json()

    answer = partner_client.post(f"/v1.1/orders/{order['orderId']}/cancel", {}, format="json")

    assert answer.status_code == 200, answer.json()
    assert (Voucher.objects.get().uses, Voucher.objects.get().discount_given) == (0, 0)


def test_a_budget_caps_the_discount_given(partner_client, open_day):
    voucher("BUDGET", effect="amount_off", value=Decimal("10"), budget=Decimal("25"))
    two = order_body(open_day.date, ("adult", 2), voucher="BUDGET")

    first = partner_client.post("/v1.1/orders", two, format="json")
    second = partner_client.post("/v1.1/orders", two, format="json")
    quote = partner_client.post("/v1.1/orders", {**two, "dryRun": True}, format="json")

    assert first.status_code == 201
    assert second.status_code == quote.status_code == 409
    assert second.json()["reason"] == quote.json()["reason"] == "voucher_budget_spent"
    assert Voucher.objects.get().discount_given == Decimal("20.00")


def test_a_voucher_keeps_places_for_its_holders_alone(partner_client, visitor_client):
    day = MuseumDayFactory(date=later(), capacity=5)
    voucher("LENDERS", effect="free", max_uses=2, keep_day=day.date)

    public = partner_client.post("/v1.1/orders", order_body(day.date, ("adult", 3)), format="json")
    more = partner_client.post("/v1.1/orders", order_body(day.date, ("adult", 1)), format="json")
    holder = partner_client.post(
        "/v1.1/orders", order_body(day.date, ("adult", 2), voucher="LENDERS"), format="json"
    )

    assert public.status_code == 201
    assert more.status_code == 409 and more.json()["reason"] == "sold_out"
    assert more.json()["available"] == 0
    assert holder.status_code == 201
    assert MuseumDay.objects.get(pk=day.pk).sold == 5


def test_a_voucher_that_keeps_places_and_takes_nothing_off_is_used_for_its_places(
    partner_client,
):
    day = MuseumDayFactory(date=later(), capacity=3)
    voucher("OFFER", effect="percent_off", value=Decimal("0"), max_uses=2, keep_day=day.date)
    body = order_body(day.date, ("adult", 2), voucher="OFFER")

    bought = partner_client.post("/v1.1/orders", body, format="json")
    again = partner_client.post("/v1.1/orders", body, format="json")

    assert bought.status_code == 201, bought.content
    assert bought.json()["total"] == 30  # the catalogue's price
    assert [t["voucher"] for t in bought.json()["tickets"]] == ["OFFER", "OFFER"]
    assert {t["discount"] for t in bought.json()["tickets"]} == {0}
    # Its uses are spent: it keeps no more places, nor buys them again.
    assert Voucher.objects.get(code="OFFER").uses == 2
    assert again.status_code == 409
    public = partner_client.post("/v1.1/orders", order_body(day.date, ("adult", 1)), format="json")
    assert public.status_code == 201


def test_an_expired_voucher_keeps_nothing(partner_client):
    day = MuseumDayFactory(date=later(), capacity=2)
    voucher(
        "GONE", max_uses=2, keep_day=day.date, valid_until=timezone.now() - dt.timedelta(seconds=1)
    )

    answer = partner_client.post("/v1.1/orders", order_body(day.date, ("adult", 2)), format="json")

    assert answer.status_code == 201


def test_a_slot_and_an_event_date_keep_places_too(partner_client):
    day = MuseumDayFactory(date=later(), capacity=100)
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=2)
    event = SpecialEventFactory(dates=[later(4)])
    event_date = EventDate.objects.get(event=event)
    EventDate.objects.filter(pk=event_date.pk).update(capacity=2)
    voucher("SLOT", max_uses=1, keep_slot=slot)
    voucher("SHOW", max_uses=1, keep_event_date=event_date)
    timed = order_body(day.date, ("adult", 2), entryTime="10:00")
    show = order_body(later(4), ("adult", 2), ticketType="event", eventId=str(event.pk))

    assert partner_client.post("/v1.1/orders", timed, format="json").status_code == 409
    assert partner_client.post("/v1.1/orders", show, format="json").status_code == 409
    # One ticket each with the voucher, one without: its kept place and one more.
    timed["lines"] = [{"category": "adult", "quantity": 1, "voucher": "slot"}, timed["lines"][0]]
    show["lines"] = [{"category": "adult", "quantity": 1, "voucher": "show"}, show["lines"][0]]
    timed["lines"][1]["quantity"] = show["lines"][1]["quantity"] = 1
    assert partner_client.post("/v1.1/orders", timed, format="json").status_code == 201
    assert partner_client.post("/v1.1/orders", show, format="json").status_code == 201


def test_a_confirmed_orders_vouchers_are_audited_as_redeemed(partner_client, open_day):
    voucher("PRESS", tag="press")
    partner_client.post(
        "/v1.1/orders", order_body(open_day.date, ("adult", 2), voucher="PRESS"), format="json"
    )

    record = AuditRecord.objects.get(action=Action.REDEEMED)
    assert record.object_repr == "PRESS"
    assert record.changes["uses"] == 2 and record.changes["tag"] == "press"


def test_a_members_free_place_takes_no_voucher(partner_client, visitor, open_day):
    member = membership(buyer=visitor, admits=2)
    body = order_body(open_day.date, ("member", 1), membership=str(member.pk))
    body["lines"][0]["voucher"] = "ANY"

    answer = partner_client.post("/v1.1/orders", body, format="json")

    assert answer.status_code == 400
    assert "lines.0.voucher" in answer.json()["errors"]


def test_pay_what_you_want_takes_the_named_price_at_least_the_minimum(visitor_client, open_day):
    VisitorCategory.objects.filter(category="adult").update(
        pay_what_you_want=True, general_price=Decimal("3")
    )
    body = order_body(open_day.date, ("adult", 2))
    body["lines"][0]["price"] = 12.5

    quote = visitor_client.post("/v1.1/orders", {**body, "dryRun": True}, format="json")
    body["lines"][0]["price"] = 2.99
    below = visitor_client.post("/v1.1/orders", body, format="json")
    del body["lines"][0]["price"]
    minimum = visitor_client.post("/v1.1/orders", body, format="json")

    assert quote.status_code == 200 and quote.json()["total"] == 25
    assert below.status_code == 400 and "lines.0.price" in below.json()["errors"]
    assert minimum.status_code == 201 and minimum.json()["total"] == 6
    assert Ticket.objects.count() == 2


def test_only_a_pay_what_you_want_category_takes_a_price(visitor_client, open_day):
    body = order_body(open_day.date, ("adult", 1))
    body["lines"][0]["price"] = 1

    answer = visitor_client.post("/v1.1/orders", body, format="json")

    assert answer.status_code == 400 and "lines.0.price" in answer.json()["errors"]


def test_generated_codes_have_no_look_alike_characters():
    codes = {new_code("SCH-") for _ in range(200)}

    assert len(codes) == 200
    assert all(code.startswith("SCH-") and len(code) == 14 for code in codes)
    assert not set("".join(code[4:] for code in codes)) - set(ALPHABET)
    assert not set("0O1IL5S2Z") & set(ALPHABET)


def test_a_code_given_a_limit_later_counts_from_what_it_gave(partner_client, open_day):
    code = voucher("LAUNCH", effect="amount_off", value=Decimal("5"))
    partner_client.post(
        "/v1.1/orders", order_body(open_day.date, ("adult", 2), voucher="LAUNCH"), format="json"
    )
    Voucher.objects.filter(pk=code.pk).update(max_uses=3, budget=Decimal("12"))

    recount(code.pk)
    again = partner_client.post(
        "/v1.1/orders", order_body(open_day.date, ("adult", 1), voucher="LAUNCH"), format="json"
    )

    assert again.status_code == 409 and again.json()["reason"] == "voucher_budget_spent"
    code.refresh_from_db()
    assert (code.uses, code.discount_given) == (2, Decimal("10.00"))


def test_a_hold_that_ran_out_unreleased_does_not_keep_the_last_use(online_client, open_day):
    voucher("LAST", effect="percent_off", value=Decimal("50"), max_uses=1)
    body = order_body(open_day.date, ("adult", 1), voucher="LAST")
    held = online_client.post("/v1.1/orders", body, format="json").json()
    Order.objects.filter(pk=held["orderId"]).update(
        hold_expires_at=timezone.now() - dt.timedelta(seconds=1)
    )

    answer = online_client.post("/v1.1/orders", body, format="json")  # no sweep ran

    assert answer.status_code == 201, answer.json()
    assert Order.objects.get(pk=held["orderId"]).status == "expired"
    assert Voucher.objects.get().uses == 1


def test_the_public_availability_leaves_out_the_places_a_voucher_keeps(visitor_client):
    day = MuseumDayFactory(date=later(), capacity=10)
    slot = EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=4)
    EntrySlot.objects.create(day=day, entry_time=dt.time(11), capacity=4)
    voucher("SLOTKEPT", max_uses=3, keep_slot=slot)
    voucher("DAYKEPT", max_uses=7, keep_day=day.date)

    slots = visitor_client.get(f"/v1.1/museum-hours/{day.date}/slots").json()

    # 10:00 keeps 3 of its 4; the day keeps 7 of its 10, which leaves 3 for 11:00's 4.
    assert [s["available"] for s in slots] == [1, 3]
