"""The confirmation email outbox: written with the purchase, retried until the server takes it."""

import datetime as dt
from io import StringIO

import pytest
from django.core import mail
from django.core.management import CommandError, call_command
from django.db import connections, transaction
from django.utils import timezone

from tests.factories import MuseumDayFactory, TicketFactory
from tickets import services
from tickets.models import OutboxEmail, Ticket

URL = "/v1.1/tickets"
LOCMEM = "django.core.mail.backends.locmem.EmailBackend"


@pytest.fixture
def open_day(db):
    return MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=3))


@pytest.fixture
def refusing_mail_server(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens: refused


@pytest.fixture
def clock(monkeypatch):
    """The outbox's clock, moved by the test instead of waiting for a retry."""

    class Clock:
        now = timezone.now()

        def advance(self, **delta):
            self.now += dt.timedelta(**delta)

    moved = Clock()
    monkeypatch.setattr(services, "clock", lambda: moved.now)
    return moved


def buy(client, day):
    body = {"ticketType": "general", "ticketDate": day.isoformat(), "email": "ada@example.com"}
    response = client.post(URL, body, format="json")
    assert response.status_code == 201
    return Ticket.objects.get(pk=response.json()["ticketId"])


def send_outbox() -> str:
    out = StringIO()
    call_command("send_outbox", stdout=out)
    return out.getvalue()


def test_the_email_goes_out_after_the_purchase_and_is_marked_sent(visitor_client, open_day, clock):
    ticket = buy(visitor_client, open_day.date)
    # The purchase only writes the email down: drawing its attachment is the worker's job.
    assert not mail.outbox

    assert "1 sent, 0 not sent" in send_outbox()

    [message] = mail.outbox
    assert ticket.confirmation_code in message.body
    email = OutboxEmail.objects.get(ticket=ticket)
    assert (email.attempts, email.sent_at, email.next_attempt_at) == (1, clock.now, None)
    assert "0 sent" in send_outbox() and len(mail.outbox) == 1


def test_a_refused_email_stays_pending_and_the_command_sends_it_later(
    visitor_client,
    open_day,
    clock,
    refusing_mail_server,
    settings,
):
    ticket = buy(visitor_client, open_day.date)

    assert "0 sent, 1 not sent" in send_outbox()
    email = OutboxEmail.objects.get(ticket=ticket)
    assert email.sent_at is None and email.attempts == 1
    assert email.last_error.startswith("ConnectionRefusedError")
    assert email.next_attempt_at == clock.now + dt.timedelta(minutes=1)
    assert not mail.outbox

    settings.EMAIL_BACKEND = LOCMEM  # the mail server is back
    assert "0 sent" in send_outbox()  # not due yet
    clock.advance(minutes=1)
    assert "1 sent, 0 not sent" in send_outbox()

    [message] = mail.outbox
    assert message.to == ["ada@example.com"] and ticket.confirmation_code in message.body
    email.refresh_from_db()
    assert email.sent_at == clock.now and email.attempts == 2 and email.last_error == ""
    clock.advance(days=2)
    assert "0 sent, 0 not sent" in send_outbox()
    assert len(mail.outbox) == 1  # a sent email is never sent again


def test_retries_wait_longer_each_time_then_give_up(
    visitor_client, open_day, clock, refusing_mail_server
):
    ticket = buy(visitor_client, open_day.date)
    services.send_due_emails()  # the first try
    waits = []
    email = OutboxEmail.objects.get(ticket=ticket)
    while email.next_attempt_at is not None:
        waits.append(email.next_attempt_at - clock.now)
        clock.now = email.next_attempt_at
        services.send_due_emails()
        email.refresh_from_db()

    minutes = [int(wait.total_seconds() // 60) for wait in waits]
    assert minutes[:8] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert len(minutes) == services.OUTBOX_MAX_ATTEMPTS - 1
    assert email.attempts == services.OUTBOX_MAX_ATTEMPTS and email.sent_at is None
    assert email.last_error.startswith("ConnectionRefusedError")


def test_a_purchase_that_rolls_back_leaves_no_email(visitor, open_day, clock):
    with pytest.raises(RuntimeError), transaction.atomic():
        services.buy_ticket(
            buyer=visitor, ticket_type="general", ticket_date=open_day.date, email="a@example.com"
        )
        raise RuntimeError("the purchase fails after the ticket is written")

    assert not OutboxEmail.objects.exists()
    assert services.send_due_emails() == (0, 0) and not mail.outbox


def test_the_interval_must_be_positive(db):
    with pytest.raises(CommandError):
        call_command("send_outbox", "--loop", "--interval", "0")


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_an_email_another_worker_is_sending_is_left_to_it(visitor, open_day):
    email = OutboxEmail.objects.create(
        ticket=TicketFactory(buyer=visitor, date=open_day.date),
        next_attempt_at=timezone.now(),
    )
    other_worker = connections.create_connection("default")
    other_worker.set_autocommit(False)
    with other_worker.cursor() as cursor:
        cursor.execute("SELECT 1 FROM tickets_outboxemail WHERE id = %s FOR UPDATE", [email.pk])
    try:
        assert services.send_due_emails() == (0, 1)
        assert not mail.outbox
    finally:
        other_worker.rollback()
        other_worker.close()

    assert services.send_due_emails() == (1, 0)
    assert len(mail.outbox) == 1
