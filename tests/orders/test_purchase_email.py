"""The contract's purchase is mailed through the one email pipeline, its order's: enqueued with
the purchase, sent once, never twice. (Retries and lost attempts: tests/orders/test_tasks.py.)"""

import datetime as dt

import pytest
import time_machine
from django.core import mail
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from museum.lost_work import LOST_AFTER
from orders import tasks
from orders.models import Order, Ticket
from orders.services.sale import buy_ticket
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, TicketFactory

# The worker checks its connection between tasks as Django does between requests, and closes one
# found inside a transaction: the tests that run it commit, as the purchase does.
pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1.1/tickets"


@pytest.fixture
def open_day(db):
    return MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=3))


@pytest.fixture
def clock():
    """The clock stands still, and moves when the test says."""
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        yield traveller


def buy(client, day):
    body = {"ticketType": "general", "ticketDate": day.isoformat(), "email": "ada@example.com"}
    response = client.post(URL, body, format="json")
    assert response.status_code == 201
    return Ticket.objects.select_related("order").get(pk=response.json()["ticketId"])


def attempts_of(order_id) -> list[DBTaskResult]:
    """The email's task results, oldest first (the backend's table, read by the test)."""
    return list(
        DBTaskResult.objects.filter(
            task_path=tasks.send_order_confirmation_email.module_path,
            args_kwargs__kwargs__order_id=str(order_id),
        ).order_by("enqueued_at", F("started_at").asc(nulls_last=True))
    )


def test_the_purchase_enqueues_its_orders_email_and_the_worker_sends_it_once(
    visitor_client, open_day, clock
):
    ticket = buy(visitor_client, open_day.date)
    # The purchase only enqueues the email: drawing the attachment is the worker's job.
    assert not mail.outbox
    [waiting] = attempts_of(ticket.order_id)
    assert str(waiting.id) == ticket.order.confirmation_task_id
    assert waiting.status == TaskResultStatus.READY

    run_task_worker()

    [message] = mail.outbox
    assert message.to == ["ada@example.com"] and ticket.order.confirmation_code in message.body
    assert Order.objects.get(pk=ticket.order_id).confirmation_sent_at == timezone.now()
    [done] = attempts_of(ticket.order_id)
    assert done.status == TaskResultStatus.SUCCESSFUL and done.return_value == "sent"

    # Run again (a duplicate task, or the worker once more): a sent email is never sent again.
    tasks.send_order_confirmation_email.enqueue(order_id=str(ticket.order_id))
    run_task_worker()
    assert len(mail.outbox) == 1


def test_a_purchase_that_rolls_back_enqueues_nothing(visitor, open_day):
    with pytest.raises(RuntimeError), transaction.atomic():
        ticket = buy_ticket(
            buyer=visitor, ticket_type="general", ticket_date=open_day.date, email="a@example.com"
        )
        assert len(attempts_of(ticket.order_id)) == 1  # enqueued inside the purchase's transaction
        raise RuntimeError("the purchase fails after the ticket is written")

    assert not Order.objects.exists()
    assert not attempts_of(ticket.order_id)
    run_task_worker()
    assert not mail.outbox


def test_an_email_waiting_behind_others_is_not_enqueued_twice(visitor_client, open_day, clock):
    buy(visitor_client, open_day.date)
    clock.shift(LOST_AFTER * 3)  # no worker ran meanwhile: its attempt is still waiting
    assert tasks.requeue_lost_order_confirmations() == 0
    run_task_worker()
    assert len(mail.outbox) == 1


def test_a_second_run_for_an_email_being_sent_sends_nothing_and_does_not_wait(visitor, open_day):
    order = TicketFactory(buyer=visitor, date=open_day.date).order
    # A first run, in the middle of sending: it claimed the email and committed.
    assert tasks.claim_confirmation(order_id=order.pk, attempt=1) is not None

    outcome = tasks.send_order_confirmation_email.call(order_id=str(order.pk))

    assert outcome.startswith("nothing to do") and not mail.outbox
