"""The order's tickets as a PDF: real text, QR codes a decoder reads from a 150 dpi print of it
(each ticket's, and the order's on the first page), the paper the museum set, pages in the order's
lines with cancelled tickets last, what it says of cancelling, kept after it is made and made
again when a ticket changes."""

import datetime as dt
import re
import subprocess

import pytest
import time_machine
from django.utils import timezone

from orders import tokens
from orders.documents import forget_order_pdf
from orders.models import Order, TicketsPdf
from orders.selectors import line_order
from tests.factories import MuseumDayFactory, staff_member
from tests.orders.conftest import order_body
from tests.qr import qr_texts
from tickets.services import check_in

ORDERS = "/v1.1/orders"
POINTS_PER_MM = 72 / 25.4
# The tests that read a PDF back, with poppler's tools.
NEEDS_POPPLER = pytest.mark.needs_tool("pdftotext", "pdfinfo", "pdftoppm")


def poppler(*command: str, pdf: bytes) -> bytes:
    """A poppler tool's output for the PDF given on its standard input."""
    return subprocess.run([*command], input=pdf, capture_output=True, check=True).stdout


def pdf_text(pdf: bytes) -> str:
    return poppler("pdftotext", "-layout", "-", "-", pdf=pdf).decode()


def page_size_mm(pdf: bytes) -> tuple[int, int]:
    info = poppler("pdfinfo", "-", pdf=pdf).decode()
    width, height = re.search(r"Page size:\s+([\d.]+) x ([\d.]+) pts", info).groups()
    return round(float(width) / POINTS_PER_MM), round(float(height) / POINTS_PER_MM)


def page_png(pdf: bytes, page: int) -> bytes:
    """One page printed at 150 dpi, as a PNG."""
    return poppler("pdftoppm", "-r", "150", "-png", "-f", str(page), "-l", str(page), "-", pdf=pdf)


@pytest.fixture
def museum(settings):
    settings.MUSEUM_NAME = "Rijksmuseum Test"
    settings.MUSEUM_ADDRESS = "Museumstraat 1, 1071 XX Amsterdam"


@pytest.fixture
def order(visitor_client, timed_day, museum) -> Order:
    body = order_body(timed_day.date, ("adult", 1), ("child", 2), entryTime="10:30")
    answer = visitor_client.post(ORDERS, body, format="json")
    assert answer.status_code == 201
    return Order.objects.get(pk=answer.json()["orderId"])


def tickets_pdf(client, order: Order, **headers):
    return client.get(f"{ORDERS}/{order.pk}/tickets.pdf", headers=headers)


@NEEDS_POPPLER
def test_the_pdf_is_text_on_a4_with_a_qr_code_read_at_150_dpi(visitor_client, order):
    answer = tickets_pdf(visitor_client, order)

    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf"
    pdf = answer.content
    assert page_size_mm(pdf) == (210, 297)
    pages = pdf_text(pdf).split("\f")
    tickets = sorted(order.tickets.select_related("category"), key=line_order)
    for number, (text, ticket) in enumerate(zip(pages, tickets, strict=False), start=1):
        assert "Rijksmuseum Test" in text and "Museumstraat 1" in text
        assert "10:00–17:00" in text  # the day's hours, on a 24-hour clock
        assert "General entry" in text and f"{ticket.category.name} · " in text
        assert "Entry from 10:30" in text
        assert f"Ticket {number} of 3" in text and order.confirmation_code in text
        assert ticket.confirmation_code in text and "Cancellation: until " in text
        assert "CANCELLED" not in text
    second = tickets[1]
    [token] = qr_texts(page_png(pdf, 2))
    assert token == tokens.sign_ticket(ticket_id=second.pk, ticket_date=second.date)
    assert tokens.verify_ticket_token(token).ticket_id == second.pk


@NEEDS_POPPLER
def test_the_first_page_carries_the_orders_code_which_admits_the_family(visitor_client, order):
    pdf = tickets_pdf(visitor_client, order).content
    first = sorted(order.tickets.all(), key=line_order)[0]

    codes = qr_texts(page_png(pdf, 1))
    entry = dt.datetime.combine(order.date, dt.time(10, 30), tzinfo=timezone.get_current_timezone())
    with time_machine.travel(entry, tick=False):
        admission = check_in(scanned=order.confirmation_code, by=staff_member())

    assert codes == {
        tokens.sign_ticket(ticket_id=first.pk, ticket_date=first.date),
        order.confirmation_code,
    }
    assert "The whole order: 3 tickets" in pdf_text(pdf).split("\f")[0]
    assert all(order.confirmation_code not in qr_texts(page_png(pdf, n)) for n in (2, 3))
    assert len(admission.admitted) == 3  # the door admits an order by its code


@NEEDS_POPPLER
def test_pages_follow_the_orders_lines_adults_first(visitor_client, timed_day, museum):
    body = order_body(timed_day.date, ("child", 2), ("adult", 1), entryTime="10:30")
    order_id = visitor_client.post(ORDERS, body, format="json").json()["orderId"]

    pages = pdf_text(visitor_client.get(f"{ORDERS}/{order_id}/tickets.pdf").content).split("\f")

    assert "Adult · €15.00" in pages[0]
    assert all("Child (6-17) · €7.50" in page for page in pages[1:3])


def test_the_pdf_is_made_once_and_answers_304_while_unchanged(visitor_client, order):
    first = tickets_pdf(visitor_client, order)
    kept = TicketsPdf.objects.get(order=order)

    again = tickets_pdf(visitor_client, order)
    unchanged = tickets_pdf(visitor_client, order, if_none_match=first["ETag"])

    assert first["ETag"] == again["ETag"] == f'"{kept.etag}"'
    assert again.content == first.content
    assert TicketsPdf.objects.get(order=order).made_at == kept.made_at  # served, not made again
    assert unchanged.status_code == 304 and unchanged["ETag"] == first["ETag"]
    assert "no-cache" in first["Cache-Control"] and "private" in first["Cache-Control"]


@NEEDS_POPPLER
def test_a_cancelled_ticket_makes_it_again_stamped_on_the_last_page(visitor_client, order):
    first = tickets_pdf(visitor_client, order)
    adult = order.tickets.get(category__category="adult")  # its first page

    visitor_client.post(f"{ORDERS}/{order.pk}/tickets/{adult.pk}/cancel")
    answer = tickets_pdf(visitor_client, order, if_none_match=first["ETag"])

    assert answer.status_code == 200 and answer["ETag"] != first["ETag"]
    *valid, last = pdf_text(answer.content).rstrip("\f").split("\f")
    assert "CANCELLED" in last and adult.confirmation_code in last
    assert "Cancellation" not in last  # nothing left to cancel on it
    assert not any("CANCELLED" in text for text in valid)
    assert "The whole order: 2 tickets" in valid[0]
    assert TicketsPdf.objects.get(order=order).etag == answer["ETag"].strip('"')


@NEEDS_POPPLER
def test_tickets_bought_after_their_deadline_promise_no_cancelling(visitor_client, museum):
    today = MuseumDayFactory(date=timezone.localdate())  # its deadline was yesterday
    order_id = visitor_client.post(ORDERS, order_body(today.date), format="json").json()["orderId"]

    text = pdf_text(visitor_client.get(f"{ORDERS}/{order_id}/tickets.pdf").content)

    assert "Cancellation: this ticket can no longer be cancelled online." in text
    assert "until" not in text.split("Cancellation")[1] and "/orders/cancel/" not in text


@NEEDS_POPPLER
def test_a_free_ticket_says_how_to_cancel_it_and_promises_no_money(visitor_client, open_day):
    body = order_body(open_day.date, ("adult", 1), ("infant", 1))
    order = Order.objects.get(pk=visitor_client.post(ORDERS, body, format="json").json()["orderId"])

    adult, infant = pdf_text(visitor_client.get(f"{ORDERS}/{order.pk}/tickets.pdf").content).split(
        "\f"
    )[:2]

    link = f"http://127.0.0.1:8000/orders/cancel/{tokens.sign_cancel_link(order_id=order.pk)}"
    assert "Infant (under 6) · €0.00" in infant and "price back" not in infant
    assert "you can cancel this ticket at" in infant and "price back" in adult
    for text in (adult, infant):
        assert link.replace("\n", "") in text.replace("\n", "")


@NEEDS_POPPLER
def test_the_museums_own_cancel_instructions_replace_the_link(visitor_client, order, settings):
    settings.MUSEUM_CANCEL_INSTRUCTIONS = "Call us on +31 20 000 0000."

    text = pdf_text(tickets_pdf(visitor_client, order).content)

    assert "Cancellation, until " in text and ": Call us on +31 20 000 0000." in text
    assert "/orders/cancel/" not in text


def test_a_forgotten_pdf_is_made_again(visitor_client, order):
    tickets_pdf(visitor_client, order)

    forget_order_pdf(order)

    assert not TicketsPdf.objects.filter(order=order).exists()
    assert tickets_pdf(visitor_client, order).status_code == 200
    assert TicketsPdf.objects.filter(order=order).exists()


@NEEDS_POPPLER
def test_the_museum_may_print_on_us_letter(visitor_client, order, settings):
    settings.MUSEUM_PAPER_SIZE = "letter"

    pdf = tickets_pdf(visitor_client, order).content

    assert page_size_mm(pdf) == (216, 279)


@NEEDS_POPPLER
def test_a_twenty_ticket_order_takes_under_100_kb_a_ticket(visitor_client, open_day):
    body = order_body(open_day.date, ("adult", 12), ("child", 8))
    order_id = visitor_client.post(ORDERS, body, format="json").json()["orderId"]

    pdf = visitor_client.get(f"{ORDERS}/{order_id}/tickets.pdf").content

    assert pdf_text(pdf).count(" of 20 · Order ") == 20
    assert len(pdf) < 20 * 100_000
