"""The console email backend of local work (`make run`): each email's subject, sender,
recipients and text, its attachments named, and none of their base64."""

import datetime as dt
from io import StringIO

import pytest
from django.core.mail import EmailMultiAlternatives, get_connection

from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory
from tests.orders.conftest import order_body


def printed(*messages) -> str:
    stream = StringIO()
    get_connection("museum.mail.ConsoleEmailBackend", stream=stream).send_messages(list(messages))
    return stream.getvalue()


def test_an_email_prints_its_subject_recipients_text_and_attachments_by_name():
    message = EmailMultiAlternatives(
        subject="Your 2 tickets",
        body="Thank you for your order.\nOrder: order-abc\n",
        from_email="tickets@museum.example",
        to=["ada@example.com"],
        cc=["desk@museum.example"],
    )
    message.attach_alternative("<p>Thank you</p>", "text/html")
    message.attach("order-abc.pdf", b"%PDF-1.4" + bytes(5000), "application/pdf")
    message.attach("visit.ics", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", "text/calendar")

    text = printed(message)

    assert text.splitlines()[:6] == [
        "Subject: Your 2 tickets",
        "From: tickets@museum.example",
        "To: ada@example.com, desk@museum.example",
        "",
        "Thank you for your order.",
        "Order: order-abc",
    ]
    assert "Attached: order-abc.pdf (application/pdf, 5008 bytes)" in text
    assert "Attached: visit.ics (text/calendar, 32 bytes)" in text
    assert "Also as text/html" in text
    assert "base64" not in text and "BEGIN:VCALENDAR" not in text and "<p>" not in text


@pytest.mark.django_db(transaction=True)  # the task worker sends the email
def test_a_confirmation_prints_in_a_few_lines(visitor_client, settings, capsys):
    settings.EMAIL_BACKEND = "museum.mail.ConsoleEmailBackend"
    day = MuseumDayFactory(date=dt.date.today() + dt.timedelta(days=3))
    visitor_client.post("/v1.1/orders", order_body(day.date, ("adult", 2)), format="json")
    capsys.readouterr()

    run_task_worker()

    out = capsys.readouterr().out
    assert "Subject: Your 2 tickets for general entry on" in out
    assert "To: family@example.com" in out
    assert "Attached: order-" in out and ".pdf (application/pdf, " in out
    assert "Attached: visit.ics (text/calendar, " in out
    assert "base64" not in out and len(out.splitlines()) < 40
