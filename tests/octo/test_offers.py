"""OCTO's `octo/offers`: a reseller's offerCode is a voucher's code sold through the OCTO channel,
taken by the booking's order under the sale's own rules and locks; without the capability the
code is ignored, as OCTO ignores the fields of a capability not asked for."""

import datetime as dt
from decimal import Decimal

import time_machine
from django.utils import timezone

from octo.models import Booking, PartnerTerms
from orders.models import Order, OrderStatus, Ticket, VisitorCategory, Voucher
from tests.octo.conftest import B1, reserve_body, slot_id, uid

OFFERS = {"HTTP_OCTO_CAPABILITIES": "octo/offers, octo/pricing"}


def voucher(code: str = "SPRING", **fields) -> Voucher:
    categories = fields.pop("categories", ())
    made = Voucher.objects.create(
        code=code, **{"effect": "percent_off", "value": Decimal("20"), **fields}
    )
    made.categories.set(VisitorCategory.objects.filter(category__in=categories))
    return made


def cents(category: str) -> int:
    return int(VisitorCategory.objects.get(category=category).general_price * 100)


def reserve(octo, day, *units, headers=OFFERS, **extra):
    return octo.post("/octo/bookings", reserve_body(day, *units, **extra), format="json", **headers)


def test_an_offer_code_reduces_the_booking_and_counts_its_uses(octo, partner, timed_day):
    PartnerTerms.objects.create(account=partner, commission_percent=Decimal("10"))
    voucher("SPRING", categories=["adult"], max_uses=5, tag="Spring in the museum")

    held = reserve(octo, timed_day.date, "adult", "child", offerCode="Spring ")

    assert held.status_code == 200, held.json()
    booking = held.json()
    adult, child = cents("adult"), cents("child")
    assert (booking["offerCode"], booking["offerTitle"]) == ("SPRING", "Spring in the museum")
    assert booking["offerIsCombination"] is False
    assert booking["offerComparisons"] == []
    assert booking["offer"]["code"] == "SPRING"
    assert booking["offer"]["restrictions"]["unitIds"] == ["adult"]
    assert booking["offers"] == [booking["offer"]]
    # Each unit item: the price before the voucher as `original`, after it as `retail`.
    priced = [
        (u["unitId"], u["pricing"]["original"], u["pricing"]["retail"])
        for u in booking["unitItems"]
    ]
    assert priced == [("adult", adult, adult * 80 // 100), ("child", child, child)]
    assert booking["unitItems"][0]["pricing"]["net"] == adult * 80 * 90 // 10000
    # The booking's pricing is its unit items' sums.
    assert booking["pricing"]["original"] == adult + child
    assert booking["pricing"]["retail"] == sum(u["pricing"]["retail"] for u in booking["unitItems"])
    order = Order.objects.get()
    assert order.total * 100 == booking["pricing"]["retail"]
    reduced = Ticket.objects.get(order=order, voucher__isnull=False)
    assert (reduced.category.category, reduced.discount * 100) == ("adult", adult * 20 // 100)
    assert Voucher.objects.get().uses == 1

    confirmed = octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json", **OFFERS).json()
    assert confirmed["status"] == "CONFIRMED"
    assert confirmed["offerCode"] == "SPRING"
    assert Booking.objects.get().net_total == order.total - order.total / 10
    # Read without the capability: no offer fields, the price the booking was sold at.
    plain = octo.get(f"/octo/bookings/{B1}", HTTP_OCTO_CAPABILITIES="octo/pricing").json()
    assert "offerCode" not in plain
    assert plain["pricing"]["retail"] == booking["pricing"]["retail"]


def test_a_code_whose_channels_lack_octo_is_refused_as_an_unknown_one(octo, timed_day):
    voucher("DESKONLY", channels=["desk", "online", "partner"])

    refused = reserve(octo, timed_day.date, offerCode="deskonly")
    unknown = reserve(octo, timed_day.date, offerCode="NOSUCH", uuid=uid("b-2"))

    assert refused.status_code == 400
    assert refused.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "The offerCode does not apply to this booking.",
        "offerCode": "DESKONLY",
    }
    assert unknown.json() == {**refused.json(), "offerCode": "NOSUCH"}
    assert not Order.objects.exists() and not Booking.objects.exists()
    assert Voucher.objects.get().uses == 0


def test_without_the_capability_the_code_is_ignored(octo, timed_day):
    voucher("SPRING", max_uses=5)

    held = reserve(
        octo,
        timed_day.date,
        "adult",
        headers={"HTTP_OCTO_CAPABILITIES": "octo/pricing"},
        offerCode="SPRING",
    ).json()

    assert held["status"] == "ON_HOLD"
    assert "offerCode" not in held
    assert held["pricing"]["retail"] == held["pricing"]["original"] == cents("adult")
    assert Booking.objects.get().offer_code == ""
    assert not Ticket.objects.filter(voucher__isnull=False).exists()
    assert Voucher.objects.get().uses == 0
    # A code nobody asked to apply is not even looked at: an unknown one is no error either.
    other = reserve(octo, timed_day.date, uuid=uid("b-2"), headers={}, offerCode="NOSUCH")
    assert other.status_code == 200


def test_a_used_up_code_is_refused_and_says_so(octo, timed_day):
    voucher("ONCE", effect="free", max_uses=1)
    assert reserve(octo, timed_day.date, "adult", offerCode="ONCE").status_code == 200

    refused = reserve(octo, timed_day.date, "adult", uuid=uid("b-2"), offerCode="ONCE")

    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert refused.json()["errorMessage"].startswith(
        "The offerCode does not apply to this booking: "
    )
    assert "no uses left" in refused.json()["errorMessage"]
    assert Booking.objects.count() == 1 and Voucher.objects.get().uses == 1


def test_a_code_past_its_budget_is_refused(octo, timed_day):
    voucher("SMALL", effect="free", budget=Decimal("1"))

    refused = reserve(octo, timed_day.date, "adult", offerCode="SMALL")

    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert refused.json()["offerCode"] == "SMALL"
    assert Voucher.objects.get().discount_given == 0


def test_a_rebooking_keeps_the_offer_and_an_update_may_change_or_drop_it(octo, timed_day):
    voucher("SPRING", max_uses=5)
    voucher("FREE", effect="free", max_uses=5)
    reserve(octo, timed_day.date, "adult", offerCode="SPRING")

    # Another unit and another slot: the same offer, its uses taken anew.
    moved = octo.patch(
        f"/octo/bookings/{B1}",
        {
            "unitItems": [{"unitId": "adult"}, {"unitId": "adult"}],
            "availabilityId": slot_id(timed_day.date, 11),
        },
        format="json",
        **OFFERS,
    ).json()
    assert moved["offerCode"] == "SPRING"
    assert [u["pricing"]["retail"] for u in moved["unitItems"]] == [cents("adult") * 80 // 100] * 2
    assert Voucher.objects.get(code="SPRING").uses == 2

    changed = octo.patch(f"/octo/bookings/{B1}", {"offerCode": "free"}, format="json", **OFFERS)
    assert changed.json()["offerCode"] == "FREE" and changed.json()["pricing"]["retail"] == 0
    assert Voucher.objects.get(code="SPRING").uses == 0
    assert Voucher.objects.get(code="FREE").uses == 2

    dropped = octo.patch(f"/octo/bookings/{B1}", {"offerCode": None}, format="json", **OFFERS)
    assert dropped.json()["offerCode"] is None
    assert dropped.json()["pricing"]["retail"] == 2 * cents("adult")
    assert Voucher.objects.get(code="FREE").uses == 0

    # A refused change keeps the booking as it was.
    voucher("OTHER", channels=["desk"])
    refused = octo.patch(f"/octo/bookings/{B1}", {"offerCode": "OTHER"}, format="json", **OFFERS)
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert Booking.objects.get().offer_code == ""
    assert Order.objects.get(octo_booking__uuid=B1).status == OrderStatus.HELD


def test_an_offer_changes_only_while_on_hold(octo, timed_day):
    voucher("SPRING")
    reserve(octo, timed_day.date, "adult")
    octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json", **OFFERS)

    late = octo.patch(f"/octo/bookings/{B1}", {"offerCode": "SPRING"}, format="json", **OFFERS)

    assert late.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert not Ticket.objects.filter(voucher__isnull=False).exists()


def test_a_confirmation_may_name_the_offer(octo, timed_day):
    voucher("SPRING", max_uses=1)
    reserve(octo, timed_day.date, "adult")

    confirmed = octo.post(
        f"/octo/bookings/{B1}/confirm", {"offerCode": "SPRING"}, format="json", **OFFERS
    ).json()

    assert (confirmed["status"], confirmed["offerCode"]) == ("CONFIRMED", "SPRING")
    assert confirmed["pricing"]["retail"] == cents("adult") * 80 // 100
    assert Voucher.objects.get().uses == 1
    # Used up now: another booking's confirmation naming it is refused, its hold kept.
    reserve(octo, timed_day.date, "adult", uuid=uid("b-2"))
    refused = octo.post(
        f"/octo/bookings/{uid('b-2')}/confirm", {"offerCode": "SPRING"}, format="json", **OFFERS
    )
    assert (refused.json()["error"], refused.json()["offerCode"]) == (
        "UNPROCESSABLE_ENTITY",
        "SPRING",
    )
    assert Order.objects.get(octo_booking__uuid=uid("b-2")).status == OrderStatus.HELD


def test_a_confirmation_after_the_hold_ran_out_takes_the_offer_again(octo, timed_day):
    voucher("SPRING", max_uses=1)
    reserve(octo, timed_day.date, "adult", offerCode="SPRING", expirationMinutes=5)

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=6)):
        confirmed = octo.post(f"/octo/bookings/{B1}/confirm", {}, format="json", **OFFERS)

    assert confirmed.status_code == 200, confirmed.json()
    assert (confirmed.json()["status"], confirmed.json()["offerCode"]) == ("CONFIRMED", "SPRING")
    assert confirmed.json()["pricing"]["retail"] == cents("adult") * 80 // 100
    # The run-out hold's use given back, the new order's taken: one in all.
    assert Voucher.objects.get().uses == 1
    assert Ticket.objects.filter(voucher__isnull=False, cancelled_at__isnull=True).count() == 1


def test_availability_is_priced_with_the_offer_where_it_applies(octo, timed_day):
    voucher("MORNING", categories=["adult"], entry_until=dt.time(10, 30), tag="Early birds")
    body = {
        "productId": "general",
        "optionId": "DEFAULT",
        "localDate": timed_day.date.isoformat(),
        "offerCode": "morning",
    }

    slots = octo.post("/octo/availability", body, format="json", **OFFERS).json()

    by_time = {slot["id"]: slot for slot in slots}
    early, late = by_time[slot_id(timed_day.date, 10)], by_time[slot_id(timed_day.date, 11)]
    assert (early["offerCode"], early["offerTitle"]) == ("MORNING", "Early birds")
    adult = next(p for p in early["unitPricing"] if p["unitId"] == "adult")
    assert (adult["original"], adult["retail"]) == (cents("adult"), cents("adult") * 80 // 100)
    child = next(p for p in early["unitPricing"] if p["unitId"] == "child")
    assert child["original"] == child["retail"] == cents("child")
    # Out of its entry times: no offer there, the catalogue's prices.
    assert (late["offerCode"], late["offer"], late["offers"]) == (None, None, [])
    assert all(p["original"] == p["retail"] for p in late["unitPricing"])

    # An unknown code is an offer that applies nowhere (codes cannot be probed).
    unknown = octo.post(
        "/octo/availability", {**body, "offerCode": "NOSUCH"}, format="json", **OFFERS
    ).json()
    assert {slot["offerCode"] for slot in unknown} == {None}
    # Without the capability, none of it.
    plain = octo.post(
        "/octo/availability", body, format="json", HTTP_OCTO_CAPABILITIES="octo/pricing"
    ).json()
    assert "offerCode" not in plain[0]
    assert all(p["original"] == p["retail"] for p in plain[0]["unitPricing"])
