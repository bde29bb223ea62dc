"""Receipts, invoices and credit notes: a confirmed order with a price gets one document from a
gapless series a year, in its buyer's language, whose per-rate totals are the order's; a
business gets an invoice; a cancellation after it a credit note of its own series for exactly
what goes back; never edited; listed and served only to who may see the order, and mailed with
the confirmation."""

import re
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from orders.models import (
    DocumentKind,
    MembershipType,
    NumberSeries,
    Order,
    Payment,
    Refund,
    SaleDocument,
    VisitorCategory,
)
from orders.services.receipts import issue_receipt, take_number
from orders.tasks import send_order_confirmation_email
from tests.factories import MuseumDayFactory, SpecialEventFactory
from tests.orders.conftest import later, order_body
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, pdf_text

ORDERS = "/v1.1/orders"


def rates(adult: str, child: str) -> None:
    for code, rate in (("adult", adult), ("child", child)):
        category = VisitorCategory.objects.get(category=code)
        category.tax_rate = Decimal(rate)
        category.save()


def place(client, day, *lines, **extra) -> dict:
    answer = client.post(ORDERS, order_body(day, *lines, **extra), format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def pay_at_desk(staff_client, order: dict, method: str = "cash") -> None:
    payments = f"{ORDERS}/{order['orderId']}/payments"
    paid = staff_client.post(payments, {"provider": "desk", "method": method}, format="json")
    assert paid.status_code == 201 and paid.json()["state"] == "confirmed", paid.content


def pay_online(client, order: dict) -> None:
    payments = f"{ORDERS}/{order['orderId']}/payments"
    started = client.post(payments, {"provider": "demo"}, format="json").json()
    assert Client().post(started["payUrl"], {"outcome": "pay"}).status_code == 302


def documents(client, order: dict):
    return client.get(f"{ORDERS}/{order['orderId']}/documents")


def year() -> int:
    return timezone.localdate().year


# What is issued, and when


@pytest.mark.parametrize("include_tax", [True, False])
def test_a_receipts_totals_per_rate_are_the_orders_taxes_for_mixed_rates(
    online_client, staff_client, open_day, settings, include_tax
):
    settings.MUSEUM_PRICES_INCLUDE_TAX = include_tax
    rates(adult="9", child="21")  # adult 15.00, child 7.50
    order = place(online_client, open_day.date, ("adult", 3), ("child", 1))
    assert documents(online_client, order).json() == []  # held: nothing issued yet

    pay_at_desk(staff_client, order)

    answer = online_client.get(f"{ORDERS}/{order['orderId']}").json()
    [receipt] = documents(online_client, order).json()
    assert receipt["kind"] == "receipt" and receipt["number"] == f"R{year()}-000001"
    assert receipt["taxes"] == answer["taxes"]
    assert receipt["total"] == answer["total"] and receipt["corrects"] is None
    kept = SaleDocument.objects.get(number=receipt["number"])
    # Each line's tax is the tickets' own, summed (three adults: 3 × 1.24 gross, 3 × 1.35 net).
    [adults, child] = kept.lines
    assert (adults["quantity"], adults["rate"]) == (3, "9.00")
    assert Decimal(adults["tax"]) == Decimal("3.72" if include_tax else "4.05")
    assert Decimal(adults["net"]) + Decimal(adults["tax"]) == Decimal(adults["gross"])
    assert child["rate"] == "21.00"
    assert sum(Decimal(line["gross"]) for line in kept.lines) == kept.total
    assert kept.total - kept.tax == sum(Decimal(rate["net"]) for rate in kept.taxes)
    assert kept.payments == [
        {
            "provider": "desk",
            "method": "cash",
            "amount": str(kept.total),
            "date": timezone.localdate().isoformat(),
        }
    ]


def test_a_payment_online_confirms_the_order_with_its_receipt(online_client, open_day):
    order = place(online_client, open_day.date, ("adult", 2))

    pay_online(online_client, order)

    [receipt] = documents(online_client, order).json()
    assert (receipt["kind"], receipt["total"]) == ("receipt", 30)
    [payment] = SaleDocument.objects.get().payments
    assert (payment["provider"], payment["amount"]) == ("demo", "30.00")


def test_a_free_order_gets_no_document(online_client, open_day):
    VisitorCategory.objects.filter(category="adult").update(general_price=0)
    order = place(online_client, open_day.date, ("adult", 1))

    assert order["status"] == "confirmed"
    assert documents(online_client, order).json() == []


def test_a_business_gets_an_invoice_with_its_address_and_vat_id(
    online_client, staff_client, open_day
):
    invoice = {"company": "Het Lyceum", "address": "Schoolstraat 1, Utrecht", "vatId": "NL0001"}
    order = place(online_client, open_day.date, ("adult", 2), invoice=invoice)

    pay_at_desk(staff_client, order, method="card")

    [document] = documents(online_client, order).json()
    assert (document["kind"], document["number"]) == ("invoice", f"I{year()}-000001")
    kept = SaleDocument.objects.get()
    assert (kept.company, kept.address, kept.vat_id) == (
        "Het Lyceum",
        "Schoolstraat 1, Utrecht",
        "NL0001",
    )


def test_a_partners_order_on_account_is_invoiced_to_the_partner(visitor, visitor_client, open_day):
    visitor.first_name, visitor.last_name = "Tours", "Company"
    visitor.save()
    order = place(
        visitor_client, open_day.date, ("adult", 1), invoice={"company": "Ignored", "vatId": "B1"}
    )

    [document] = documents(visitor_client, order).json()
    assert document["kind"] == "invoice"
    kept = SaleDocument.objects.get()
    assert (kept.company, kept.vat_id) == ("Tours Company", "B1")
    assert kept.payments[0]["provider"] == "on_account"


def test_the_contracts_purchase_keeps_its_shape_and_gets_a_document(visitor_client, open_day):
    bought = visitor_client.post(
        "/v1.1/tickets",
        {"ticketType": "general", "ticketDate": open_day.date.isoformat(), "email": "a@b.example"},
        format="json",
    )

    assert bought.status_code == 201
    assert "invoice" not in bought.json()
    assert SaleDocument.objects.filter(order__tickets__pk=bought.json()["ticketId"]).count() == 1


# Gapless numbers


def test_numbers_follow_each_other_per_kind_and_start_again_each_year(db, settings):
    settings.TIME_ZONE = "Europe/Amsterdam"
    with transaction.atomic():
        first = take_number(kind=DocumentKind.RECEIPT, year=2030)
        second = take_number(kind=DocumentKind.RECEIPT, year=2030)
        note = take_number(kind=DocumentKind.CREDIT_NOTE, year=2030)
        next_year = take_number(kind=DocumentKind.RECEIPT, year=2031)

    assert (first, second, note, next_year) == (
        "R2030-000001",
        "R2030-000002",
        "C2030-000001",
        "R2031-000001",
    )


def test_the_year_is_the_museums_at_the_moment_of_issue(online_client, staff_client, settings):
    settings.TIME_ZONE = "Pacific/Kiritimati"  # UTC+14: its new year comes first
    with time_machine.travel("2030-12-31T12:00:00Z", tick=False):
        # 02:00 on 1 January 2031 at the museum; in UTC still 2030.
        day = MuseumDayFactory(date=later(3))
        order = place(online_client, day.date, ("adult", 1))
        pay_at_desk(staff_client, order)

    assert SaleDocument.objects.get().number == "R2031-000001"


def test_a_transaction_that_fails_after_taking_a_number_leaves_no_gap(
    online_client, staff_client, open_day
):
    held = place(online_client, open_day.date, ("adult", 1))
    order = Order.objects.get(pk=held["orderId"])
    order.status = "confirmed"

    with pytest.raises(RuntimeError), transaction.atomic():
        assert issue_receipt(order).number == f"R{year()}-000001"
        raise RuntimeError("the confirmation fails after its receipt")

    assert not SaleDocument.objects.exists()
    pay_at_desk(staff_client, held)
    assert SaleDocument.objects.get().number == f"R{year()}-000001"
    assert NumberSeries.objects.get(prefix="R").last == 1


def test_a_document_is_issued_once_per_order(online_client, staff_client, open_day):
    order = place(online_client, open_day.date, ("adult", 1))
    pay_at_desk(staff_client, order)
    confirmed = Order.objects.get(pk=order["orderId"])

    with pytest.raises(IntegrityError), transaction.atomic():
        issue_receipt(confirmed)

    assert SaleDocument.objects.count() == 1


def test_an_issued_document_is_never_changed(online_client, staff_client, open_day):
    order = place(online_client, open_day.date, ("adult", 1))
    pay_at_desk(staff_client, order)
    receipt = SaleDocument.objects.get()

    receipt.total = Decimal("1.00")
    with pytest.raises(ValueError, match="never changed"):
        receipt.save()

    assert SaleDocument.objects.get().total == Decimal("15.00")


# Credit notes


def test_cancelling_a_ticket_of_a_receipted_order_issues_a_credit_note(
    online_client, staff_client, open_day
):
    rates(adult="9", child="21")
    order = place(online_client, open_day.date, ("adult", 2), ("child", 1))
    pay_at_desk(staff_client, order)
    child = next(t for t in order["tickets"] if t["category"] == "child")

    cancel = f"{ORDERS}/{order['orderId']}/tickets/{child['ticketId']}/cancel"
    cancelled = online_client.post(cancel)

    assert cancelled.status_code == 200
    [receipt, note] = documents(online_client, order).json()
    assert (note["kind"], note["number"]) == ("credit_note", f"C{year()}-000001")
    assert note["corrects"] == receipt["number"] == f"R{year()}-000001"
    assert note["total"] == -7.5 == -cancelled.json()["refundDue"]
    assert note["taxes"] == [{"rate": 21, "net": -6.2, "tax": -1.3, "gross": -7.5}]
    kept = SaleDocument.objects.get(kind="credit_note")
    assert kept.payments[0]["amount"] == "-7.50" and kept.payments[0]["provider"] == "desk"
    # The receipt is as it was issued.
    assert documents(online_client, order).json()[0] == receipt


def test_cancelling_the_rest_issues_another_credit_note_and_they_add_up(
    online_client, staff_client, open_day
):
    order = place(online_client, open_day.date, ("adult", 2), ("child", 1))
    pay_at_desk(staff_client, order)
    first = order["tickets"][0]
    online_client.post(f"{ORDERS}/{order['orderId']}/tickets/{first['ticketId']}/cancel")

    online_client.post(f"{ORDERS}/{order['orderId']}/cancel")

    listed = documents(online_client, order).json()
    assert [d["number"] for d in listed] == [
        f"R{year()}-000001",
        f"C{year()}-000001",
        f"C{year()}-000002",
    ]
    assert sum(Decimal(str(d["total"])) for d in listed) == 0


def test_a_partial_refund_is_credited_split_by_the_lines_rate(
    online_client, staff_client, open_day
):
    rates(adult="9", child="9")
    order = place(online_client, open_day.date, ("adult", 1))
    pay_at_desk(staff_client, order)
    # The payment has paid back all but 10.00 of its 15.00 already (a refund made by hand).
    payment = Payment.objects.get(state="confirmed")
    Refund.objects.create(order=payment.order, payment=payment, amount=5, source="staff")

    online_client.post(f"{ORDERS}/{order['orderId']}/cancel")

    note = SaleDocument.objects.get(kind="credit_note")
    assert note.total == Decimal("-10.00")
    # 10.00 at 9 %: 9.17 net, 0.83 tax (the one rule, half up), never the line's 1.24.
    assert note.taxes == [{"rate": "9.00", "net": "-9.17", "tax": "-0.83", "gross": "-10.00"}]


def test_no_credit_note_for_an_order_without_a_document(visitor_client, open_day):
    VisitorCategory.objects.filter(category="adult").update(general_price=0)
    order = place(visitor_client, open_day.date, ("adult", 1))

    visitor_client.post(f"{ORDERS}/{order['orderId']}/cancel")

    assert not SaleDocument.objects.exists()


def test_a_membership_gets_an_invoice_and_its_cancellation_a_credit_note(visitor_client):
    MembershipType.objects.create(
        code="individual", name="Individual", price=Decimal("60"), tax_rate=Decimal("9")
    )
    sold = visitor_client.post(
        "/v1.1/memberships",
        {"membershipType": "individual", "holderName": "Ada", "email": "ada@example.com"},
        format="json",
    ).json()

    order = sold["order"]
    [invoice] = documents(visitor_client, order).json()
    expected = [{"rate": 9, "net": 55.05, "tax": 4.95, "gross": 60}]
    assert invoice["taxes"] == order["taxes"] == expected
    assert SaleDocument.objects.get().lines[0]["description"] == "Membership: Individual"

    assert visitor_client.post(f"{ORDERS}/{order['orderId']}/cancel").status_code == 200
    [_, note] = documents(visitor_client, order).json()
    assert note["total"] == -60 and note["corrects"] == invoice["number"]


# Who sees them


def test_the_documents_are_listed_and_served_only_to_who_may_see_the_order(
    online_client, staff_client, visitor_client, open_day
):
    order = place(online_client, open_day.date, ("adult", 1))
    pay_at_desk(staff_client, order)
    [receipt] = documents(online_client, order).json()

    assert documents(staff_client, order).status_code == 200
    assert documents(visitor_client, order).status_code == 404
    assert visitor_client.get(receipt["pdfUrl"]).status_code == 404
    assert staff_client.get(receipt["pdfUrl"]).status_code == 200
    served = online_client.get(receipt["pdfUrl"])
    assert served.status_code == 200 and served["Content-Type"] == "application/pdf"
    assert served.content.startswith(b"%PDF-")
    unknown = f"{ORDERS}/{order['orderId']}/documents/R1999-000001"
    assert online_client.get(unknown).status_code == 404
    # Made once, kept: the same bytes and a 304 for its ETag.
    again = online_client.get(receipt["pdfUrl"], headers={"If-None-Match": served["ETag"]})
    assert again.status_code == 304
    assert online_client.get(receipt["pdfUrl"]).content == served.content


# The PDF


@NEEDS_POPPLER
def test_the_receipt_pdf_shows_the_museum_number_lines_tax_and_payment(
    online_client, staff_client, open_day, settings
):
    settings.MUSEUM_NAME = "Rijksmuseum Test"
    settings.MUSEUM_ADDRESS = "Museumstraat 1, 1071 XX Amsterdam"
    settings.MUSEUM_TAX_NUMBER = "NL123456789B01"
    rates(adult="9", child="21")
    order = place(online_client, open_day.date, ("adult", 2), ("child", 1), name="Ada Lovelace")
    pay_at_desk(staff_client, order)
    [receipt] = documents(online_client, order).json()

    text = pdf_text(online_client.get(receipt["pdfUrl"]).content)

    assert "Rijksmuseum Test" in text and "Museumstraat 1" in text
    assert "Tax number: NL123456789B01" in text
    assert f"Receipt R{year()}-000001" in text and "Ada Lovelace" in text
    assert "Adult, General entry" in text and re.search(r"\b9 ?%", text) and "21 %" in text
    assert "€2.48" in text and "€1.30" in text and "€37.50" in text  # the taxes and the total
    assert "Cash at the desk" in text


@NEEDS_POPPLER
def test_a_credit_note_pdf_names_what_it_corrects_in_the_buyers_language(
    online_client, staff_client, open_day
):
    order = place(online_client, open_day.date, ("adult", 2), language="de")
    pay_at_desk(staff_client, order)
    online_client.post(f"{ORDERS}/{order['orderId']}/cancel")
    [receipt, note] = documents(online_client, order).json()

    text = pdf_text(online_client.get(note["pdfUrl"]).content)

    assert f"Gutschrift {note['number']}" in text
    assert receipt["number"] in text
    assert "-30,00 €" in text or "−30,00 €" in text


# The email


def test_the_confirmation_email_carries_the_receipt(online_client, staff_client, open_day):
    order = place(online_client, open_day.date, ("adult", 1))
    pay_at_desk(staff_client, order)

    send_order_confirmation_email.call(order_id=order["orderId"])

    [message] = mail.outbox
    names = [name for name, _content, _type in message.attachments]
    assert f"R{year()}-000001.pdf" in names
    pdf = next(content for name, content, _type in message.attachments if name.startswith("R"))
    assert pdf == SaleDocument.objects.get().pdf


# The desk and the admin


def desk_sale(day, **fields) -> dict:
    return {
        "ticket_date": day.isoformat(),
        "qty_adult": "2",
        "payment": "cash",
        "tendered": "50",
        "sell": "",
        **fields,
    }


def test_the_desk_prints_the_receipt_of_a_sale(desk_client, open_day):
    answer = desk_client.post("/desk/sell/", desk_sale(open_day.date), follow=True)

    receipt = SaleDocument.objects.get()
    page = answer.content.decode()
    link = f"/desk/orders/{receipt.order_id}/documents/{receipt.number}.pdf"
    assert f'href="{link}"' in page and f"Print receipt {receipt.number}" in page
    printed = desk_client.get(link)
    assert printed.status_code == 200 and printed["Content-Type"] == "application/pdf"
    assert printed.content == bytes(SaleDocument.objects.get().pdf)


def test_the_desk_sells_to_a_business_with_an_invoice(desk_client, open_day):
    fields = {"company": "Het Lyceum", "address": "Schoolstraat 1", "vat_id": "NL0001"}

    answer = desk_client.post("/desk/sell/", desk_sale(open_day.date, **fields), follow=True)

    invoice = SaleDocument.objects.get()
    assert invoice.kind == "invoice" and invoice.company == "Het Lyceum"
    assert f"Print invoice {invoice.number}" in answer.content.decode()
    refused = desk_client.post("/desk/sell/", desk_sale(open_day.date, vat_id="NL0001"))
    assert refused.status_code == 400 and SaleDocument.objects.count() == 1


def test_staff_see_an_orders_documents_in_the_admin_and_change_none(
    desk_client, online_client, staff_client, open_day
):
    order = place(online_client, open_day.date, ("adult", 1))
    pay_at_desk(staff_client, order)
    online_client.post(f"{ORDERS}/{order['orderId']}/cancel")
    receipt, note = SaleDocument.objects.order_by("pk")

    page = desk_client.get(f"/admin/orders/order/{order['orderId']}/change/").content.decode()
    listed = desk_client.get("/admin/orders/saledocument/").content.decode()
    shown = desk_client.get(f"/admin/orders/saledocument/{note.pk}/change/").content.decode()
    printed = desk_client.get(f"/admin/orders/saledocument/{receipt.pk}/pdf/")

    assert receipt.number in page and note.number in page
    assert f'href="/admin/orders/saledocument/{receipt.pk}/pdf/"' in page
    assert receipt.number in listed and note.number in listed
    assert "-15.00" in shown and receipt.number in shown
    assert printed.status_code == 200 and printed.content.startswith(b"%PDF-")
    assert desk_client.get("/admin/orders/saledocument/add/").status_code == 403
    deleted = desk_client.post(f"/admin/orders/saledocument/{note.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 403 and SaleDocument.objects.count() == 2


def test_a_ticket_cancelled_while_held_is_on_no_document_nor_what_was_paid_over(
    online_client, open_day
):
    order = place(online_client, open_day.date, ("adult", 2))
    payments = f"{ORDERS}/{order['orderId']}/payments"
    started = online_client.post(payments, {"provider": "demo"}, format="json").json()
    first = order["tickets"][0]
    online_client.post(f"{ORDERS}/{order['orderId']}/tickets/{first['ticketId']}/cancel")

    assert Client().post(started["payUrl"], {"outcome": "pay"}).status_code == 302

    # 30.00 paid for what costs 15.00 now: 15.00 goes back at once, which credits nothing.
    [receipt] = documents(online_client, order).json()
    assert receipt["total"] == 15 and receipt["kind"] == "receipt"
    kept = SaleDocument.objects.get()
    assert [line["quantity"] for line in kept.lines] == [1]
    assert [payment["amount"] for payment in kept.payments] == ["15.00"]


def test_invoice_details_name_a_company(online_client, open_day):
    body = order_body(open_day.date, ("adult", 1), invoice={"vatId": "NL0001"})

    answer = online_client.post(ORDERS, body, format="json")

    assert answer.status_code == 400 and "invoice.company" in answer.json()["errors"]
    assert not Order.objects.exists()


def test_listing_an_orders_documents_costs_a_few_queries(
    online_client, staff_client, open_day, django_assert_max_num_queries
):
    order = place(online_client, open_day.date, ("adult", 2))
    pay_at_desk(staff_client, order)
    for ticket in order["tickets"]:
        online_client.post(f"{ORDERS}/{order['orderId']}/tickets/{ticket['ticketId']}/cancel")

    # The account; the order's buyer; its documents with what each corrects.
    with django_assert_max_num_queries(3):
        listed = documents(online_client, order).json()

    assert [document["kind"] for document in listed] == ["receipt", "credit_note", "credit_note"]


def test_an_event_tickets_line_names_the_event(visitor_client):
    event = SpecialEventFactory(name="Night tour", price=Decimal("20"), dates=[later()])
    body = order_body(later(), ("adult", 1), ticketType="event", eventId=str(event.pk))

    place_answer = visitor_client.post(ORDERS, body, format="json")

    assert place_answer.status_code == 201
    [line] = SaleDocument.objects.get().lines
    assert line["description"].startswith("Adult, Night tour, ")
    assert line["gross"] == "20.00"
