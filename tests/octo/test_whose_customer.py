"""Whose customer: the museum mails a reseller's customer only where the partner's terms say the
museum sends tickets; off (the default), confirming and cancelling a booking with a contact's
email send nothing, and the booking carries what the reseller delivers instead."""

import pytest
from django.core import mail
from django.urls import reverse

from octo.models import PartnerTerms
from orders.models import Order
from orders.tokens import sign_tickets_link
from tests.conftest import run_task_worker
from tests.octo.conftest import B1, reserve_body

pytestmark = pytest.mark.django_db(transaction=True)

CONTACT = {"fullName": "Ada Lovelace", "emailAddress": "ada@example.com"}


def book_and_confirm(octo, day) -> dict:
    held = octo.post("/octo/bookings", reserve_body(day.date, "adult", "child"), format="json")
    assert held.status_code == 200, held.json()
    confirmed = octo.post(f"/octo/bookings/{B1}/confirm", {"contact": CONTACT}, format="json")
    assert confirmed.status_code == 200, confirmed.json()
    return confirmed.json()


def assert_deliverable_by_the_reseller(booking: dict) -> None:
    """Each unit's ticket carries its QR value (what the door scans) and the PDF's signed link,
    which opens without an account."""
    order = Order.objects.get(confirmation_code=booking["supplierReference"])
    pdf = reverse("tickets-link", kwargs={"token": sign_tickets_link(order_id=order.pk)})
    for unit in booking["unitItems"]:
        options = unit["ticket"]["deliveryOptions"]
        formats = {option["deliveryFormat"]: option["deliveryValue"] for option in options}
        assert formats["QRCODE"]
        assert formats["PDF_URL"].endswith(pdf)


def test_by_default_the_museum_mails_a_resellers_customer_nothing(octo, partner, timed_day):
    PartnerTerms.objects.create(account=partner)  # terms, the switch left as it comes: off

    booking = book_and_confirm(octo, timed_day)
    run_task_worker()
    assert mail.outbox == []
    assert_deliverable_by_the_reseller(booking)

    cancelled = octo.post(f"/octo/bookings/{B1}/cancel", {}, format="json")
    assert cancelled.json()["status"] == "CANCELLED"
    run_task_worker()
    assert mail.outbox == []
    order = Order.objects.get(confirmation_code=booking["supplierReference"])
    assert order.email == "ada@example.com" and not order.mail_buyer


def test_a_partner_without_terms_mails_nothing_either(octo, timed_day):
    book_and_confirm(octo, timed_day)
    run_task_worker()
    assert mail.outbox == []


def test_where_the_museum_sends_tickets_it_mails_confirmation_and_cancellation(
    octo, partner, timed_day
):
    PartnerTerms.objects.create(account=partner, museum_sends_tickets=True)

    booking = book_and_confirm(octo, timed_day)
    run_task_worker()
    assert [message.to for message in mail.outbox] == [["ada@example.com"]]
    assert_deliverable_by_the_reseller(booking)

    octo.post(f"/octo/bookings/{B1}/cancel", {}, format="json")
    run_task_worker()
    assert [message.to for message in mail.outbox] == [["ada@example.com"]] * 2
