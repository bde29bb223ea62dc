"""An order's confirmation code at check-in: every valid ticket of the order admitted in one
UPDATE, the others refused each with its reason; and codes read forgivingly."""

import datetime as dt

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from orders import tokens
from orders.models import Order, Ticket
from orders.services.sale import place_order
from tests.conftest import admission_statements, claims
from tests.factories import MuseumDayFactory, partner_member, staff_member
from tickets import services
from tickets.exceptions import AlreadyCheckedIn, TicketCancelled

CHECK_IN = "/v1.1/tickets/check-in"
TODAY = dt.date(2030, 6, 12)
NOW = timezone.make_aware(dt.datetime.combine(TODAY, dt.time(11)))


@pytest.fixture(autouse=True)
def open_today(db):
    MuseumDayFactory(date=TODAY)


@pytest.fixture(autouse=True)
def at_eleven():
    with time_machine.travel(NOW, tick=False):
        yield


def family(adults: int = 2, children: int = 1) -> Order:
    return place_order(
        buyer=partner_member(),
        email="family@example.com",
        ticket_type="general",
        ticket_date=TODAY,
        lines=[
            {"category": "adult", "quantity": adults},
            {"category": "child", "quantity": children},
        ],
    )


def tickets_of(order: Order) -> list[Ticket]:
    return list(Ticket.objects.filter(order=order).order_by("confirmation_code"))


def test_an_orders_code_admits_all_its_valid_tickets_in_one_update(staff_client):
    order = family(adults=2, children=2)
    first, second, third, fourth = tickets_of(order)
    Ticket.objects.filter(pk=second.pk).update(checked_in_at=NOW - dt.timedelta(minutes=5))
    Ticket.objects.filter(pk=fourth.pk).update(cancelled_at=NOW - dt.timedelta(hours=1))

    with CaptureQueriesContext(connection) as queries:
        answer = staff_client.post(CHECK_IN, {"code": order.confirmation_code}, format="json")

    assert answer.status_code == 200
    body = answer.json()
    # The admission, and one read of the tickets it did not admit.
    assert len(claims(queries)) == 1
    assert body["orderCode"] == order.confirmation_code
    assert [t["confirmationCode"] for t in body["admitted"]] == [
        first.confirmation_code,
        third.confirmation_code,
    ]
    assert [(t["confirmationCode"], t["reason"]) for t in body["refused"]] == [
        (second.confirmation_code, "already_checked_in"),
        (fourth.confirmation_code, "cancelled"),
    ]
    assert body["refused"][0]["firstEntryAt"] is not None
    # The contract's fields: the first ticket admitted, for clients that read one ticket.
    assert (body["ticketId"], body["checkedInAt"]) == (
        str(first.pk),
        body["admitted"][0]["checkedInAt"],
    )
    checked_in = Ticket.objects.filter(order=order, checked_in_at=NOW).values_list("pk", flat=True)
    assert set(checked_in) == {first.pk, third.pk}


def test_a_valid_order_is_admitted_in_two_statements_however_many_its_tickets(
    django_assert_num_queries,
):
    order = family(adults=4, children=3)
    desk = staff_member(username="desk")

    # The UPDATE admitting the seven with their audit records (one INSERT), and the SELECT
    # finding none left to refuse.
    with django_assert_num_queries(admission_statements() + 1):
        admission = services.check_in(scanned=order.confirmation_code, by=desk)

    assert len(admission.admitted) == 7 and admission.refused == []
    assert Ticket.objects.filter(order=order, checked_in_by=desk).count() == 7


def test_an_order_none_of_whose_tickets_may_come_in_is_a_409_naming_each(staff_client):
    order = family(adults=1, children=1)
    adult, child = tickets_of(order)
    Ticket.objects.filter(pk=adult.pk).update(cancelled_at=NOW)
    Ticket.objects.filter(pk=child.pk).update(checked_in_at=NOW)

    answer = staff_client.post(CHECK_IN, {"code": order.confirmation_code}, format="json")

    assert answer.status_code == 409
    problem = answer.json()
    assert problem["reason"] == "cancelled"  # the first ticket's
    assert problem["orderCode"] == order.confirmation_code
    assert [(t["confirmationCode"], t["reason"]) for t in problem["refused"]] == [
        (adult.confirmation_code, "cancelled"),
        (child.confirmation_code, "already_checked_in"),
    ]


def test_a_second_scan_of_the_order_refuses_it(db):
    order = family()
    desk = staff_member(username="desk")
    services.check_in(scanned=order.confirmation_code, by=desk)

    with pytest.raises(AlreadyCheckedIn) as refused:
        services.check_in(scanned=order.confirmation_code, by=desk)

    assert len(refused.value.admission.refused) == 3


def test_a_tickets_own_qr_admits_only_that_ticket(staff_client):
    order = family()
    ticket, *others = tickets_of(order)
    token = tokens.sign_ticket(ticket_id=ticket.pk, ticket_date=TODAY)

    body = staff_client.post(CHECK_IN, {"code": token}, format="json").json()

    assert body["ticketId"] == str(ticket.pk)
    assert body["orderCode"] is None
    assert [t["ticketId"] for t in body["admitted"]] == [str(ticket.pk)]
    assert body["refused"] == []
    assert not Ticket.objects.filter(pk__in=[t.pk for t in others], checked_in_at__isnull=False)


def forgiving(code: str) -> list[str]:
    body = code.split("-", 1)[1] if code.startswith("order-") else code.split("-", 2)[2]
    return [code.upper(), f"  {code}\n", body, f" {body.upper()} "]


@pytest.mark.parametrize("spelling", range(4), ids=["upper", "spaces", "no-prefix", "all"])
def test_a_tickets_code_is_read_forgivingly(staff_client, spelling):
    ticket = tickets_of(family())[0]

    answer = staff_client.post(
        CHECK_IN, {"code": forgiving(ticket.confirmation_code)[spelling]}, format="json"
    )

    assert answer.status_code == 200
    assert answer.json()["ticketId"] == str(ticket.pk)
    assert answer.json()["orderCode"] is None
    assert len(answer.json()["admitted"]) == 1


@pytest.mark.parametrize("spelling", range(4), ids=["upper", "spaces", "no-prefix", "all"])
def test_an_orders_code_is_read_forgivingly(staff_client, spelling):
    order = family()

    answer = staff_client.post(
        CHECK_IN, {"code": forgiving(order.confirmation_code)[spelling]}, format="json"
    )

    assert answer.status_code == 200
    assert answer.json()["orderCode"] == order.confirmation_code
    assert len(answer.json()["admitted"]) == 3


@pytest.mark.parametrize(
    "code, status, reason",
    [
        ("hello", 404, "unknown_code"),
        ("zzzzzz-zzzzz", 404, "unknown_code"),
        ("order-zzzzzz-zzzzz", 404, "unknown_code"),
        ("ticket-general-zzzzzz-zzzzz", 404, "unknown_ticket"),
        ("MT1.hello", 400, "forged"),
        ("mt1.hello", 400, "forged"),
    ],
)
def test_text_that_is_no_known_code_is_unknown_and_only_a_bad_token_forged(
    staff_client, code, status, reason
):
    family()

    answer = staff_client.post(CHECK_IN, {"code": code}, format="json")

    assert (answer.status_code, answer.json()["reason"]) == (status, reason)
    assert not Ticket.objects.filter(checked_in_at__isnull=False).exists()


def test_a_refused_ticket_of_a_partly_admitted_order_names_its_reason(db):
    order = family(adults=1, children=1)
    adult, child = tickets_of(order)
    Ticket.objects.filter(pk=child.pk).update(cancelled_at=NOW)

    admission = services.check_in(scanned=order.confirmation_code, by=staff_member())

    assert [t.pk for t in admission.admitted] == [adult.pk]
    [refusal] = admission.refused
    assert type(refusal) is TicketCancelled and refusal.ticket.pk == child.pk
