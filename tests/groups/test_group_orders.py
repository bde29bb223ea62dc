"""Approval turns a request into its group order: confirmed, its tickets valid at once, its
invoice due (a deposit of 30 % in 7 days, the balance 14 days before the visit); numbers change
until the final date with the invoice issued anew after a credit note, and after it fewer are
still billed; staff record what the group pays."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from groups.exceptions import GroupPaidBeyond, GroupRequestAnswered
from groups.models import GroupRequest, GroupStatus
from groups.services import approval, money, numbers, requests
from hours.models import MuseumDay
from museum.exceptions import InvalidInput
from orders.models import Channel, DocumentKind, OrderStatus, SaleDocument
from orders.services.taxes import order_taxes
from tests.conftest import client_for
from tests.factories import staff_member
from tests.groups.conftest import school
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, pdf_text


@pytest.fixture
def staff(db):
    return staff_member(username="groups-desk")


@pytest.fixture
def approved(pupil, teacher, chaperones, group_day, staff):
    group = requests.request_group(account=None, **school(group_day.date))
    return approval.approve(request_id=group.pk, by=staff)


def documents(order) -> list[SaleDocument]:
    return list(SaleDocument.objects.filter(order=order).order_by("issued_at", "pk"))


def test_approval_creates_a_confirmed_group_order_with_its_invoice(approved, group_day):
    order = approved.order
    today = timezone.localdate()

    assert approved.status == GroupStatus.APPROVED and approved.places == 0
    assert (order.status, order.channel, order.paid) == (
        OrderStatus.CONFIRMED,
        Channel.INVOICE,
        Decimal("0"),
    )
    # The request's places became the order's: counted once.
    assert MuseumDay.objects.get(pk=group_day.pk).sold == 31
    tickets = list(order.tickets.all())
    assert len(tickets) == 31 and not any(t.held for t in tickets)
    # 28 pupils at 6.00; 3 teachers free with them.
    assert order.total == Decimal("168.00") and not order.paid_in_full()
    assert sorted(t.price for t in tickets if t.category.category == "teacher") == [0, 0, 0]
    [invoice] = documents(order)
    assert (invoice.kind, invoice.total, invoice.company) == (
        DocumentKind.INVOICE,
        Decimal("168.00"),
        "Schiller-Gymnasium",
    )
    assert invoice.terms == [
        {"kind": "deposit", "amount": "50.40", "due": str(today + dt.timedelta(days=7))},
        {"kind": "balance", "amount": "117.60", "due": str(group_day.date - dt.timedelta(days=14))},
    ]
    assert approved.final_numbers_date == group_day.date - dt.timedelta(days=14)


def test_an_answered_request_is_not_approved_twice(approved, staff):
    with pytest.raises(GroupRequestAnswered):
        approval.approve(request_id=approved.pk, by=staff)


def test_a_request_run_out_is_not_approved(pupil, teacher, group_day, staff):
    group = requests.request_group(account=None, **school(group_day.date))
    GroupRequest.objects.filter(pk=group.pk).update(expires_at=timezone.now())

    with pytest.raises(Exception) as refused:
        approval.approve(request_id=group.pk, by=staff)

    assert refused.value.code == "group_request_expired"


def test_numbers_raised_before_the_final_date_reissue_the_invoice(approved, group_day, staff):
    order = approved.order

    numbers.change_numbers(request_id=approved.pk, by=staff, lines={"pupil": 30, "teacher": 3})

    order.refresh_from_db()
    assert MuseumDay.objects.get(pk=group_day.pk).sold == 33
    assert order.total == Decimal("180.00")
    first, credit, second = documents(order)
    assert (credit.kind, credit.total, credit.corrects) == (
        DocumentKind.CREDIT_NOTE,
        Decimal("-168.00"),
        first,
    )
    assert (second.kind, second.total, second.replaces) == (
        DocumentKind.INVOICE,
        Decimal("180.00"),
        first,
    )
    # What the documents say is what the order costs, and its tax adds up to it.
    assert sum(d.total for d in (first, credit, second)) == order.total
    order.sold_tickets = list(order.tickets.all())
    assert sum(t.gross for t in order_taxes(order)) == order.total


def test_numbers_lowered_before_the_final_date_cost_less(approved, group_day, staff):
    numbers.change_numbers(request_id=approved.pk, by=staff, lines={"pupil": 20, "teacher": 2})

    order = approved.order
    order.refresh_from_db()
    assert MuseumDay.objects.get(pk=group_day.pk).sold == 22
    assert order.total == Decimal("120.00")
    assert order.tickets.filter(cancelled_at__isnull=True).count() == 22
    assert documents(order)[-1].total == Decimal("120.00")


def test_numbers_lowered_after_the_final_date_leave_the_amount_due(approved, group_day, staff):
    GroupRequest.objects.filter(pk=approved.pk).update(
        final_numbers_date=timezone.localdate() - dt.timedelta(days=1)
    )

    numbers.change_numbers(request_id=approved.pk, by=staff, lines={"pupil": 20, "teacher": 3})

    order = approved.order
    order.refresh_from_db()
    # The places went back; the money did not.
    assert MuseumDay.objects.get(pk=group_day.pk).sold == 23
    assert order.tickets.filter(cancelled_at__isnull=True).count() == 23
    assert (order.total, order.due) == (Decimal("168.00"), Decimal("168.00"))
    assert len(documents(order)) == 1
    assert GroupRequest.objects.get(pk=approved.pk).headcount == 23


def test_numbers_raised_after_the_final_date_only_within_the_places_left(
    approved, group_day, staff
):
    GroupRequest.objects.filter(pk=approved.pk).update(
        final_numbers_date=timezone.localdate() - dt.timedelta(days=1)
    )

    with pytest.raises(Exception) as refused:
        numbers.change_numbers(request_id=approved.pk, by=staff, lines={"pupil": 38, "teacher": 3})
    assert refused.value.code == "sold_out"

    numbers.change_numbers(request_id=approved.pk, by=staff, lines={"pupil": 30, "teacher": 3})
    order = approved.order
    order.refresh_from_db()
    assert order.total == Decimal("180.00") and MuseumDay.objects.get(pk=group_day.pk).sold == 33


def test_staff_record_a_bank_transfer_and_the_rest_later(approved, staff):
    money.record_payment(request_id=approved.pk, by=staff, amount=Decimal("50.40"))
    order = approved.order
    order.refresh_from_db()
    assert (order.paid, order.due, order.status) == (
        Decimal("50.40"),
        Decimal("117.60"),
        OrderStatus.CONFIRMED,
    )

    with pytest.raises(InvalidInput):
        money.record_payment(request_id=approved.pk, by=staff, amount=Decimal("117.61"))
    money.record_payment(request_id=approved.pk, by=staff, amount=Decimal("117.60"))
    order.refresh_from_db()
    assert order.paid_in_full()


def test_fewer_people_than_already_paid_for_are_refused(approved, staff):
    money.record_payment(request_id=approved.pk, by=staff, amount=Decimal("168.00"))

    with pytest.raises(GroupPaidBeyond):
        numbers.change_numbers(request_id=approved.pk, by=staff, lines={"pupil": 10, "teacher": 1})

    assert GroupRequest.objects.get(pk=approved.pk).headcount == 31


def test_reminders_go_once_for_what_is_still_due(approved, staff):
    GroupRequest.objects.filter(pk=approved.pk).update(deposit_due=timezone.localdate())

    assert money.remind_groups() == 1
    assert money.remind_groups() == 0
    assert GroupRequest.objects.get(pk=approved.pk).deposit_reminded_at is not None


def test_a_group_cancelled_before_the_final_date_owes_nothing(approved, group_day, staff):
    cancelled = numbers.cancel_group(request_id=approved.pk, by=staff, reason="Bus strike")

    order = cancelled.order
    order.refresh_from_db()
    assert cancelled.status == GroupStatus.CANCELLED
    assert (order.status, order.total, order.due) == (OrderStatus.CANCELLED, 0, 0)
    assert MuseumDay.objects.get(pk=group_day.pk).sold == 0
    invoice, credit = documents(order)
    assert credit.corrects == invoice and invoice.total + credit.total == 0


def test_a_group_cancelled_after_the_final_date_is_still_billed(approved, group_day, staff):
    GroupRequest.objects.filter(pk=approved.pk).update(
        final_numbers_date=timezone.localdate() - dt.timedelta(days=1)
    )

    numbers.cancel_group(request_id=approved.pk, by=staff)

    order = approved.order
    order.refresh_from_db()
    assert (order.status, order.due) == (OrderStatus.CANCELLED, Decimal("168.00"))
    assert MuseumDay.objects.get(pk=group_day.pk).sold == 0


def test_a_group_order_is_not_cancelled_or_moved_as_a_plain_order(approved, staff):
    from orders.services.cancellation import cancel_order
    from orders.services.changes import move_order

    with pytest.raises(Exception) as refused:
        cancel_order(order_id=approved.order_id, by=staff)
    assert refused.value.code == "group_order"
    with pytest.raises(Exception) as refused:
        move_order(order_id=approved.order_id, by=staff, ticket_date=approved.date)
    assert refused.value.code == "group_order"


@NEEDS_POPPLER
def test_the_group_sees_its_invoices_terms_in_the_api_and_its_pdf(
    pupil, teacher, chaperones, group_day, staff, online_visitor
):
    visitor = online_visitor
    group = requests.request_group(account=visitor, **school(group_day.date, language="en"))
    approved = approval.approve(request_id=group.pk, by=staff)
    numbers.change_numbers(request_id=group.pk, by=staff, lines={"pupil": 30, "teacher": 3})
    client = client_for(visitor)

    answer = client.get(f"/v1.1/orders/{approved.order_id}/documents")

    assert answer.status_code == 200
    first, credit, second = answer.json()
    assert (credit["corrects"], second["replaces"]) == (first["number"], first["number"])
    assert [t["kind"] for t in second["terms"]] == ["deposit", "balance"]
    assert second["terms"][0]["amount"] == 54.0  # 30 % of 180.00
    text = " ".join(pdf_text(client.get(second["pdfUrl"]).content).split())
    assert f"Replaces invoice {first['number']}" in text
    assert "Deposit: €54.00 by" in text and "Balance: €126.00 by" in text


def test_staff_approve_with_a_tour_whose_fee_is_a_line_at_its_own_rate(
    pupil, teacher, chaperones, group_day, staff
):
    from groups.models import TourProgramme

    tour = TourProgramme.objects.create(
        name="Highlights",
        languages=["de"],
        audiences=["school"],
        max_people_per_guide=25,
        fee=Decimal("50.00"),
        fee_per="guide",
        tax_rate=Decimal("19.00"),
    )
    group = requests.request_group(account=None, **school(group_day.date))

    approved = approval.approve(request_id=group.pk, by=staff, tour_id=tour.pk)

    order = approved.order
    # 31 people need 2 guides: 100.00 at 19 %, beside 168.00 of admission at 7 %.
    assert approved.tour == tour and order.total == Decimal("268.00")
    [invoice] = documents(order)
    assert [(t["rate"], t["gross"]) for t in invoice.taxes] == [
        ("7.00", "168.00"),
        ("19.00", "100.00"),
    ]
    assert approved.assignments.count() == 2


def test_approval_with_a_guide_not_free_is_refused_whole(
    pupil, teacher, chaperones, group_day, staff
):
    from groups.models import AssignmentState, GuideAbsence
    from orders.models import Order
    from tests.groups.tour_helpers import make_guide, make_tour

    tour = make_tour(languages=["de"], audiences=["school"], max_people_per_guide=25)
    anna = make_guide("Anna", languages=["de"])
    away = make_guide("Ben", languages=["de"])
    GuideAbsence.objects.create(guide=away, date=group_day.date)
    group = requests.request_group(account=None, **school(group_day.date, tour_id=tour.pk))

    with pytest.raises(Exception) as refused:
        approval.approve(request_id=group.pk, by=staff, guide_ids=[anna.pk, away.pk])

    # Nothing of it stands: not the approval, its order, nor its guides.
    assert refused.value.code == "guide_not_free"
    group.refresh_from_db()
    assert (group.status, group.places, group.order_id) == (GroupStatus.REQUESTED, 31, None)
    assert not Order.objects.exists() and not group.assignments.exists()

    approved = approval.approve(request_id=group.pk, by=staff, guide_ids=[anna.pk])

    # 31 people at 25 a guide need 2: Anna asked, the other still open for the desk.
    states = sorted((a.state, a.guide_id) for a in approved.assignments.all())
    assert states == sorted([(AssignmentState.ASKED, anna.pk), (AssignmentState.OPEN, None)])
