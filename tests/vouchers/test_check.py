"""POST /v1.1/vouchers/check: whether a code applies to an order, and what the order would cost
with it, taking nothing; the same answer for an unknown code and one that does not apply, to
anyone but staff; a gift card's code told it is one; rate-limited per account."""

from decimal import Decimal

import pytest
from django.core.cache import cache

from orders.models import Voucher
from tests.conftest import assert_problem, client_for
from tests.factories import UserFactory
from tests.giftcards.test_gift_cards import buy_card
from tests.orders.conftest import later, order_body

CHECK = "/v1.1/vouchers/check"


def check_body(code: str, *lines, **extra) -> dict:
    body = order_body(later(), *(lines or [("adult", 2), ("child", 1)]), voucher=code, **extra)
    del body["email"]
    return body


def quoted(client, **extra) -> dict:
    body = order_body(later(), ("adult", 2), ("child", 1), dryRun=True, **extra)
    answer = client.post("/v1.1/orders", body, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()


@pytest.fixture
def half_off(db):
    return Voucher.objects.create(
        code="HALF", effect="percent_off", value=Decimal("50"), max_uses=5, tag="spring"
    )


def test_a_code_that_applies_answers_the_orders_price_and_takes_nothing(online_client, half_off):
    full = quoted(online_client)

    answer = online_client.post(CHECK, check_body("half"), format="json")

    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert (body["voucher"], body["applies"]) == ("HALF", True)
    assert body["quote"]["total"] == pytest.approx(full["total"] / 2)
    assert all(line["voucher"] == "HALF" for line in body["quote"]["lines"])
    assert body["quote"] == quoted(online_client, voucher="half")  # the sale's own quote
    half_off.refresh_from_db()
    assert (half_off.uses, half_off.discount_given) == (0, 0)


def test_an_unknown_code_and_one_that_does_not_apply_answer_alike(online_client, half_off):
    Voucher.objects.create(code="KIDS", effect="free", ticket_type="event")

    unknown = online_client.post(CHECK, check_body("NOSUCH"), format="json")
    elsewhere = online_client.post(CHECK, check_body("kids"), format="json")

    first, second = assert_problem(unknown, 409), assert_problem(elsewhere, 409)
    for problem in (first, second):
        problem.pop("requestId", None)
    assert first == second and first["code"] == "voucher_not_applicable"


def test_staff_are_told_why_a_code_does_not_apply(staff_client, db):
    Voucher.objects.create(code="EVENTS", effect="free", ticket_type="event")

    unknown = staff_client.post(CHECK, check_body("NOSUCH"), format="json")
    elsewhere = staff_client.post(CHECK, check_body("events"), format="json")

    assert assert_problem(unknown, 409)["detail"] == "No voucher has this code."
    assert assert_problem(elsewhere, 409)["detail"] == "The voucher is not for this kind of visit."


def test_a_code_with_too_few_uses_left_is_told_so(online_client, half_off):
    Voucher.objects.filter(pk=half_off.pk).update(uses=4)

    answer = online_client.post(CHECK, check_body("HALF"), format="json")

    assert assert_problem(answer, 409)["code"] == "voucher_used_up"


def test_a_gift_cards_code_is_told_it_is_a_gift_card(online_client, visitor_client):
    code = buy_card(visitor_client)["code"]

    answer = online_client.post(CHECK, check_body(code.lower()), format="json")

    assert assert_problem(answer, 409)["code"] == "voucher_is_gift_card"


def test_the_check_needs_an_account_and_a_voucher(anonymous_client, online_client, half_off):
    body = check_body("HALF")

    assert_problem(anonymous_client.post(CHECK, body, format="json"), 401)
    without = {name: value for name, value in body.items() if name != "voucher"}
    assert (
        "voucher"
        in assert_problem(online_client.post(CHECK, without, format="json"), 400)["errors"]
    )


def test_an_account_checks_so_many_codes_a_minute(settings, half_off):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "voucher": "3/min",
        },
    }
    cache.clear()
    client = client_for(UserFactory(username="prober"))
    other = client_for(UserFactory(username="other"))

    answers = [client.post(CHECK, check_body(f"GUESS{n}"), format="json") for n in range(4)]

    assert [a.status_code for a in answers] == [409, 409, 409, 429]
    assert other.post(CHECK, check_body("HALF"), format="json").status_code == 200
