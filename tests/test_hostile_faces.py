"""Hostile input at the faces added since the last review, beyond the API's JSON writes (those are
in test_hostile_inputs.py, the payments' and webhooks' among them): the desk's forms and search,
the door, the order payment endpoints' lists, the demo pay page, Stripe's webhook, the webhook
subscriptions' URLs, and a NUL in any query string, the admin's included.

Each answer is a 4xx with its message, or the face's own refusal (the door's REFUSE verdict, a
declined demo payment), and changes nothing it should not; none is a 500 (Django's test client
raises a view's exception). Run on PostgreSQL too: a NUL reaches the database only there.
"""

import hashlib
import hmac
import time
import uuid

import pytest
from django.apps import apps
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from museum.accounts import DESK_GROUP, create_account, role_group
from orders.models import Order, OrderStatus, Payment, Ticket
from tests.conftest import assert_problem
from tests.factories import PASSWORD, MuseumDayFactory, UserFactory, days_from_today
from tests.orders.conftest import order_body
from webhooks.models import Subscription

NUL = "\x00"
# Text no field of these faces means: NUL first (PostgreSQL's text cannot hold it), then values
# outside every shape, and text that is only odd (it may be a name).
HOSTILE = [
    NUL,
    f"a{NUL}b",
    "a" * 5000,
    "-1",
    "1e400",
    "NaN",
    "9" * 40,
    "0000-01-01",
    "2030-02-30",
    "25:00",
    "' OR '1'='1",
    "<script>alert(1)</script>",
    "\U0001f600",
    "１２",
    " ",
]
UNKNOWN = uuid.UUID(int=1)


@pytest.fixture
def desk(client, db):
    user = create_account(username="clerk", password=PASSWORD)
    user.is_staff = True
    user.save()
    user.groups.add(role_group(DESK_GROUP))
    client.force_login(user)
    return client


@pytest.fixture
def day(db):
    return MuseumDayFactory(date=days_from_today(3))


def sale(day, **fields) -> dict:
    return {
        "ticket_date": day.date.isoformat(),
        "qty_adult": "2",
        "payment": "cash",
        "tendered": "50",
        "sell": "",
        **fields,
    }


@pytest.fixture
def sold(desk, day) -> Order:
    """An order of two adults sold at the desk, paid in cash."""
    assert desk.post("/desk/sell/", sale(day)).status_code == 302
    return Order.objects.get()


def state() -> tuple:
    return (
        list(Order.objects.order_by("pk").values_list("pk", "status", "date", "slot")),
        list(Ticket.objects.order_by("pk").values_list("pk", "cancelled_at", "checked_in_at")),
        list(Payment.objects.order_by("pk").values_list("pk", "state")),
    )


# The desk


def test_the_desks_search_answers_any_text_and_refuses_a_nul_with_a_400(desk, sold):
    for text in HOSTILE:
        answer = desk.get("/desk/", {"q": text})
        if NUL in text:
            assert answer.status_code == 400
            assert b"Null characters are not allowed." in answer.content
        else:
            assert answer.status_code == 200, text
            assert b"No order found." in answer.content


@pytest.mark.parametrize(
    "field",
    [
        "ticket_date",
        "entry_time",
        "event",
        "email",
        "name",
        "language",
        "payment",
        "tendered",
        "partner",
        "qty_adult",
    ],
)
def test_a_sale_with_a_hostile_field_is_a_400_naming_it_and_sells_nothing(desk, day, field):
    for text in HOSTILE:
        for button in ("sell", "price"):
            before = state()
            fields = {k: v for k, v in sale(day, **{field: text}).items() if k != "sell"}
            answer = desk.post("/desk/sell/", {**fields, button: ""})
            if answer.status_code == 302:  # a fine value: a name, or blank where optional
                assert button == "sell" and NUL not in text
                assert field == "name" or (text == " " and field != "ticket_date"), field
                continue
            if answer.status_code == 200:
                # Priced, or refused by the museum's rules for a value the form could read
                # (Django reads "１２" as 12: too little cash, too many visitors).
                assert NUL not in text
                assert b'id="quote"' in answer.content or b"errorlist" in answer.content
            else:
                assert answer.status_code == 400, (field, text, button)
                assert b"errorlist" in answer.content, (field, text)
            assert state() == before


def test_an_empty_sale_is_a_400(desk, day):
    answer = desk.post("/desk/sell/", {})

    assert answer.status_code == 400 and b"This field is required." in answer.content


@pytest.mark.parametrize(
    "field, label",
    [("ticket", "Ticket"), ("ticket_date", "New day"), ("entry_time", "New entry slot")],
)
def test_a_change_with_a_hostile_field_is_a_400_naming_it_and_changes_nothing(
    desk, sold, field, label
):
    what = "cancel" if field == "ticket" else "move"
    base = {"ticket_date": sold.date.isoformat()} if what == "move" else {}
    for text in HOSTILE:
        before = state()
        answer = desk.post(f"/desk/orders/{sold.pk}/{what}", {**base, field: text})
        if answer.status_code == 302:  # blank: no entry time, or the whole order
            assert text == " " and field != "ticket_date"
            continue
        assert answer.status_code == 400, (field, text)
        assert f"{label}: ".encode() in answer.content
        assert state() == before


def test_the_desk_answers_404_for_an_order_that_is_not_there(desk, sold):
    for url in [
        f"/desk/orders/{UNKNOWN}/",
        f"/desk/orders/{UNKNOWN}/tickets.pdf",
        f"/desk/orders/{sold.pk}/nothing",
        "/desk/orders/not-a-uuid/",
    ]:
        assert desk.get(url).status_code in (404, 405)
    for what in ("resend", "move", "cancel", "nothing"):
        assert desk.post(f"/desk/orders/{UNKNOWN}/{what}").status_code == 404
    assert desk.post(f"/desk/orders/{sold.pk}/cancel", {"ticket": str(UNKNOWN)}).status_code == 302
    assert Order.objects.get().status == OrderStatus.CONFIRMED


# The door


def test_the_door_refuses_any_hostile_scan_with_its_verdict(client, db):
    client.force_login(create_account(username="door", password=PASSWORD, door=True))
    for text in [*HOSTILE, "", "x" * 401]:
        answer = client.post("/door/", {"scanned": text})
        assert answer.status_code == 200, text
        assert b'data-admitted="false"' in answer.content, text
    assert not Ticket.objects.filter(checked_in_at__isnull=False).exists()


# Payments: the API's lists, the demo pay page and Stripe's webhook


def test_the_order_list_refuses_hostile_filters_by_name(visitor_client):
    for parameter in ["startDate", "endDate", "status", "confirmationCode", "page", "limit"]:
        for text in HOSTILE:
            answer = visitor_client.get("/v1.1/orders", {parameter: text})
            if answer.status_code == 200:  # a code no order has, or a page past the last
                assert parameter in ("confirmationCode", "page") and answer.json() == []
                continue
            assert list(assert_problem(answer, 400)["errors"]) == [parameter], (parameter, text)


@pytest.fixture
def demo_payment(online_client, day) -> dict:
    order = online_client.post("/v1.1/orders", order_body(day.date), format="json").json()
    url = f"/v1.1/orders/{order['orderId']}/payments"
    return online_client.post(url, {"provider": "demo"}, format="json").json()


def test_the_demo_pay_page_refuses_what_is_not_a_payment_of_its_own(demo_payment, settings):
    page = Client()
    for url in [f"/payments/demo/{UNKNOWN}", "/payments/demo/not-a-uuid"]:
        assert page.get(url).status_code == 404
        assert page.post(url, {"outcome": "pay"}).status_code == 404
    assert page.get(demo_payment["payUrl"], {"x": NUL}).status_code == 400
    settings.MUSEUM_DEMO_PAYMENTS = False
    assert page.post(demo_payment["payUrl"], {"outcome": "pay"}).status_code == 404
    assert Payment.objects.get().state == "pending"


def test_any_outcome_but_pay_declines_the_demo_payment(demo_payment):
    page = Client()
    for text in HOSTILE:
        assert page.post(demo_payment["payUrl"], {"outcome": text}).status_code == 302
    assert page.get(demo_payment["payUrl"]).status_code == 200

    assert Payment.objects.get().state == "failed"
    assert Order.objects.get().status == OrderStatus.HELD


def test_stripes_webhook_refuses_what_stripe_did_not_sign(settings, db):
    settings.STRIPE_SECRET_KEY = "sk_test_museum"
    settings.STRIPE_WEBHOOK_SECRET = "whsec_museum"
    hook = "/payments/stripe/webhook"
    stamp = str(int(time.time()))
    signature = hmac.new(b"whsec_museum", f"{stamp}.not json".encode(), hashlib.sha256)
    for body, header in [
        (b"", ""),
        (b"{}", ""),
        (b"\x00", "t=1,v1=00"),
        (b"{}", f"t={stamp},v1={'0' * 64}"),
        (b"{}", "t=,v1="),
        (b"{}", NUL),
    ]:
        answer = Client().post(
            hook, body, content_type="application/json", HTTP_STRIPE_SIGNATURE=header
        )
        assert assert_problem(answer, 400)["code"] == "bad_signature", (body, header)
    signed = f"t={stamp},v1={signature.hexdigest()}"  # signed, but no event
    answer = Client().post(
        hook, b"not json", content_type="application/json", HTTP_STRIPE_SIGNATURE=signed
    )
    assert_problem(answer, 400)


def test_a_body_too_large_for_the_stripe_webhook_is_a_400(settings, db):
    settings.STRIPE_SECRET_KEY = "sk_test_museum"
    settings.STRIPE_WEBHOOK_SECRET = "whsec_museum"

    answer = Client().post(
        "/payments/stripe/webhook", b"{" + b" " * 3_000_000 + b"}", content_type="application/json"
    )

    assert answer.status_code == 400


# Webhook subscriptions: URLs and event types no receiver has

HOSTILE_URLS = [
    "",
    "not a url",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "ftp://127.0.0.1/hook",
    "https://",
    "https://[::1",
    "https://127.0.0.1:99999/hook",
    "https://exa mple.com/",
    "https://user:secret@127.0.0.1/hook",
    f"https://127.0.0.1/{NUL}",
    "https://" + "a" * 600 + ".example/",
    "https://%00/",
    "https://10.0.0.1/hook",
]
HOSTILE_TYPES = [[], ["x"], "order.confirmed", [None], [NUL], ["order.confirmed"] * 50, {}]


def test_a_subscription_to_a_url_no_receiver_has_is_a_400_naming_it(visitor_client, settings):
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = []
    for url in HOSTILE_URLS:
        body = {"url": url, "eventTypes": ["order.confirmed"]}
        answer = visitor_client.post("/v1.1/webhooks", body, format="json")
        assert list(assert_problem(answer, 400)["errors"]) == ["url"], url
    for types in HOSTILE_TYPES:
        body = {"url": "https://127.0.0.1/hook", "eventTypes": types}
        answer = visitor_client.post("/v1.1/webhooks", body, format="json")
        errors = assert_problem(answer, 400)["errors"]
        assert [name.split(".")[0] for name in errors] == ["eventTypes"], types
    assert not Subscription.objects.exists()


def test_a_subscription_changed_to_hostile_values_is_a_400_and_unchanged(
    visitor_client, settings, receivers
):
    made = visitor_client.post(
        "/v1.1/webhooks",
        {"url": "http://127.0.0.1:9/hook", "eventTypes": ["order.confirmed"]},
        format="json",
    ).json()
    url = f"/v1.1/webhooks/{made['webhookId']}"
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = []
    changes = [{"url": text} for text in HOSTILE_URLS]
    changes += [{"eventTypes": types} for types in HOSTILE_TYPES]
    changes += [{"active": text} for text in ["yes", 1, None, NUL]]
    changes += [{"rotateSecret": text} for text in ["true", 1, None, [True]]]
    for change in changes:
        answer = visitor_client.patch(url, change, format="json")
        errors = assert_problem(answer, 400)["errors"]
        assert [name.split(".")[0] for name in errors] == list(change), change
    for other in [f"/v1.1/webhooks/{UNKNOWN}", "/v1.1/webhooks/not-a-uuid"]:
        assert_problem(visitor_client.patch(other, {"active": True}, format="json"), 404)
    subscription = Subscription.objects.get()
    assert (subscription.url, subscription.event_types) == (made["url"], made["eventTypes"])


@pytest.fixture
def receivers(settings):
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MUSEUM_WEBHOOK_ALLOW_HTTP = True


# A NUL in any query string: the admin's changelists, their filters and autocomplete too


def searchable_admins() -> list[str]:
    return [
        f"{model._meta.app_label}_{model._meta.model_name}"
        for model in apps.get_models()
        if admin.site.is_registered(model) and admin.site.get_model_admin(model).search_fields
    ]


@pytest.mark.parametrize("name", searchable_admins())
def test_a_nul_in_an_admin_search_or_filter_is_a_400(client, db, name):
    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))
    changelist = reverse(f"admin:{name}_changelist")
    assert client.get(changelist, {"q": "' OR 1=1 --"}).status_code == 200

    for query in [{"q": NUL}, {"q": f"code{NUL}"}, {"state": NUL}, {"status__exact": NUL}]:
        answer = client.get(changelist, query)
        assert answer.status_code == 400
        assert b"Null characters are not allowed." in answer.content


@pytest.mark.parametrize(
    "app_label, model_name, field_name",
    [("webhooks", "subscription", "owner"), ("orders", "salelimits", "account")],
)
def test_a_nul_in_the_admins_autocomplete_is_a_400(client, db, app_label, model_name, field_name):
    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))
    query = {"app_label": app_label, "model_name": model_name, "field_name": field_name}

    assert client.get("/admin/autocomplete/", {**query, "term": "bo"}).status_code == 200
    assert client.get("/admin/autocomplete/", {**query, "term": NUL}).status_code == 400


def test_a_nul_in_an_api_query_is_the_validation_problem_naming_it_with_the_rest(visitor_client):
    query = {"status": f"held{NUL}", "confirmationCode": f"order{NUL}", "endDate": "x"}

    problem = assert_problem(visitor_client.get("/v1.1/orders", query), 400)

    assert problem["code"] == "validation_error"
    assert set(problem["errors"]) == {"status", "confirmationCode", "endDate"}


def test_the_desk_still_finds_an_order_by_its_code(desk, sold):
    answer = desk.get("/desk/", {"q": sold.confirmation_code.lower()})

    assert answer.status_code == 302 and answer.url == f"/desk/orders/{sold.pk}/"


def test_the_slot_picker_answers_a_day_that_does_not_exist(desk, day):
    for text in HOSTILE:
        answer = desk.get("/desk/slots/", {"ticket_date": text, "event": text, "chosen": text})
        assert answer.status_code == 400 if NUL in text else 200, text
