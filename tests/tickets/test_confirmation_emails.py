"""Confirmation emails on the task queue: enqueued with the purchase, retried until the server
takes it, sent once, and found again when a worker dies mid-attempt."""

import datetime as dt
import threading

import pytest
import time_machine
from django.core import mail
from django.db import connections, transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, TicketFactory
from tickets import services, tasks
from tickets.models import OutboxEmail, Ticket
from tickets.tasks import send_confirmation_email

# The worker checks its connection between tasks as Django does between requests, and closes one
# found inside a transaction: the tests that run it commit, as the purchase does.
pytestmark = pytest.mark.django_db(transaction=True)

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
def clock():
    """The clock stands still, and moves when the test says (a retry's time)."""
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        yield traveller


def buy(client, day):
    body = {"ticketType": "general", "ticketDate": day.isoformat(), "email": "ada@example.com"}
    response = client.post(URL, body, format="json")
    assert response.status_code == 201
    return Ticket.objects.get(pk=response.json()["ticketId"])


def attempts_of(ticket) -> list[DBTaskResult]:
    """The email's task results, oldest first (the backend's table, read by the test)."""
    return list(
        DBTaskResult.objects.filter(
            task_path=send_confirmation_email.module_path,
            args_kwargs__kwargs__ticket_id=str(ticket.pk),
        )
        # A retry is enqueued while its attempt runs: at the same moment, if the clock stands.
        .order_by("enqueued_at", F("started_at").asc(nulls_last=True))
    )


def test_the_purchase_enqueues_the_email_and_the_worker_sends_it_once(
    visitor_client, open_day, clock
):
    ticket = buy(visitor_client, open_day.date)
    # The purchase only writes the email down and enqueues it: drawing the attachment is the
    # worker's job.
    assert not mail.outbox
    email = OutboxEmail.objects.get(ticket=ticket)
    [waiting] = attempts_of(ticket)
    assert str(waiting.id) == email.task_result_id and waiting.status == TaskResultStatus.READY

    run_task_worker()

    [message] = mail.outbox
    assert ticket.confirmation_code in message.body
    email.refresh_from_db()
    assert (email.attempts, email.sent_at, email.next_attempt_at) == (1, timezone.now(), None)
    [done] = attempts_of(ticket)
    assert done.status == TaskResultStatus.SUCCESSFUL and done.return_value == "sent"

    # Run again (a duplicate task, or the worker once more): a sent email is never sent again.
    send_confirmation_email.enqueue(ticket_id=str(ticket.pk))
    run_task_worker()
    assert len(mail.outbox) == 1


def test_a_purchase_that_rolls_back_enqueues_nothing(visitor, open_day):
    with pytest.raises(RuntimeError), transaction.atomic():
        ticket = services.buy_ticket(
            buyer=visitor, ticket_type="general", ticket_date=open_day.date, email="a@example.com"
        )
        assert len(attempts_of(ticket)) == 1  # enqueued inside the purchase's transaction
        raise RuntimeError("the purchase fails after the ticket is written")

    assert not OutboxEmail.objects.exists()
    assert not attempts_of(ticket)
    run_task_worker()
    assert not mail.outbox


def test_a_refused_email_is_retried_later_and_then_sent(
    visitor_client, open_day, clock, refusing_mail_server, settings
):
    ticket = buy(visitor_client, open_day.date)

    run_task_worker()
    email = OutboxEmail.objects.get(ticket=ticket)
    assert email.sent_at is None and email.attempts == 1
    assert email.last_error.startswith("ConnectionRefusedError")
    assert email.next_attempt_at == timezone.now() + dt.timedelta(minutes=1)
    failed, retry = attempts_of(ticket)
    # The failed attempt says why, masked as in the row: the buyer's address is nowhere.
    assert failed.status == TaskResultStatus.FAILED
    assert failed.exception_class_path == "tickets.tasks.ConfirmationNotSent"
    assert "ConnectionRefusedError" in failed.traceback and "ada@" not in failed.traceback
    assert retry.status == TaskResultStatus.READY and retry.run_after == email.next_attempt_at
    assert str(retry.id) == email.task_result_id
    assert not mail.outbox

    settings.EMAIL_BACKEND = LOCMEM  # the mail server is back
    run_task_worker()
    assert not mail.outbox  # not due yet
    clock.shift(dt.timedelta(minutes=1))
    run_task_worker()

    [message] = mail.outbox
    assert message.to == ["ada@example.com"] and ticket.confirmation_code in message.body
    email.refresh_from_db()
    assert email.sent_at == timezone.now() and email.attempts == 2 and email.last_error == ""
    clock.shift(dt.timedelta(days=2))
    run_task_worker()
    assert len(mail.outbox) == 1  # a sent email is never sent again


def test_retries_wait_longer_each_time_then_give_up_with_the_error(
    visitor_client, open_day, clock, refusing_mail_server
):
    ticket = buy(visitor_client, open_day.date)
    run_task_worker()  # the first try
    waits = []
    email = OutboxEmail.objects.get(ticket=ticket)
    while email.next_attempt_at is not None:
        waits.append(email.next_attempt_at - timezone.now())
        clock.move_to(email.next_attempt_at)
        run_task_worker()
        email.refresh_from_db()

    minutes = [int(wait.total_seconds() // 60) for wait in waits]
    assert minutes[:8] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert len(minutes) == tasks.MAX_ATTEMPTS - 1
    assert email.attempts == tasks.MAX_ATTEMPTS and email.sent_at is None
    assert email.last_error.startswith("ConnectionRefusedError")
    results = attempts_of(ticket)
    assert len(results) == tasks.MAX_ATTEMPTS  # one task per attempt, none left waiting
    assert {result.status for result in results} == {TaskResultStatus.FAILED}
    assert "given up: ConnectionRefusedError" in results[-1].traceback


def test_an_attempt_lost_with_its_worker_is_enqueued_again(visitor_client, open_day, clock):
    ticket = buy(visitor_client, open_day.date)
    # What a worker killed mid-attempt leaves: its task result running forever, the email due.
    [lost] = attempts_of(ticket)
    lost.claim("a-worker-that-died")

    run_task_worker()
    assert not mail.outbox
    assert tasks.requeue_lost_confirmations() == 0  # not overdue yet: perhaps still running

    clock.shift(tasks.LOST_AFTER)
    assert tasks.requeue_lost_confirmations() == 1
    assert tasks.requeue_lost_confirmations() == 0  # its new attempt is waiting: not lost
    run_task_worker()

    [message] = mail.outbox
    assert ticket.confirmation_code in message.body
    assert OutboxEmail.objects.get(ticket=ticket).sent_at is not None


def test_an_email_waiting_behind_others_is_not_enqueued_twice(visitor_client, open_day, clock):
    buy(visitor_client, open_day.date)
    clock.shift(tasks.LOST_AFTER * 3)  # no worker ran meanwhile: its attempt is still waiting
    assert tasks.requeue_lost_confirmations() == 0
    run_task_worker()
    assert len(mail.outbox) == 1


@pytest.mark.postgres_only
def test_a_second_run_for_an_email_being_sent_waits_then_sends_nothing(visitor, open_day):
    ticket = TicketFactory(buyer=visitor, date=open_day.date)
    email = OutboxEmail.objects.create(ticket=ticket, next_attempt_at=timezone.now())
    sender = connections.create_connection("default")  # a first run, in the middle of sending
    sender.set_autocommit(False)
    with sender.cursor() as cursor:
        cursor.execute("SELECT 1 FROM tickets_outboxemail WHERE id = %s FOR UPDATE", [email.pk])
    outcome = {}

    def second_run():
        try:
            outcome["it"] = tasks.attempt_confirmation(ticket_id=ticket.pk)
        finally:
            connections.close_all()

    thread = threading.Thread(target=second_run)
    thread.start()
    thread.join(timeout=1)
    assert thread.is_alive()  # waiting for the first run's row lock, not sending
    with sender.cursor() as cursor:
        cursor.execute(
            "UPDATE tickets_outboxemail SET sent_at = now(), next_attempt_at = NULL WHERE id = %s",
            [email.pk],
        )
    sender.commit()
    sender.close()
    thread.join(timeout=30)

    assert outcome["it"].startswith("nothing to do") and not mail.outbox
