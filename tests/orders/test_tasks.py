"""An order's one email and the release of expired holds, through the task worker."""

import datetime as dt
import re
import uuid

import pytest
import time_machine
from django.core import mail
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from hours.models import MuseumDay
from museum.lost_work import LOST_AFTER, RETRY
from orders import tasks
from orders.models import BuyerEmail, Order
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, SpecialEventFactory
from tests.orders.conftest import later, order_body

pytestmark = pytest.mark.django_db(transaction=True)

ORDERS = "/v1.1/orders"


def pdf_pages(pdf: bytes) -> int:
    assert pdf.startswith(b"%PDF-")
    return len(re.findall(rb"/Type\s*/Page\b", pdf))


@pytest.fixture
def clock():
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        yield traveller


def test_an_order_is_mailed_once_with_every_ticket_in_one_pdf(visitor_client):
    day = MuseumDayFactory(date=later())
    answer = visitor_client.post(
        ORDERS, order_body(day.date, ("adult", 2), ("child", 1)), format="json"
    )
    assert answer.status_code == 201
    assert not mail.outbox  # the worker sends it

    run_task_worker()
    run_task_worker()

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["family@example.com"]
    assert answer.json()["confirmationCode"] in message.body
    # The tickets, the visit, and the partner's invoice (orders.receipts).
    [(name, content, kind), (_, _, calendar), (invoice, _, _)] = message.attachments
    assert kind == "application/pdf" and name == f"{answer.json()['confirmationCode']}.pdf"
    assert invoice.startswith("I") and invoice.endswith(".pdf")
    assert pdf_pages(content) == 3
    assert calendar == "text/calendar"
    assert Order.objects.get().confirmation_sent_at is not None


def test_a_failed_email_is_tried_again_later(visitor_client, settings, clock):
    day = MuseumDayFactory(date=later())
    visitor_client.post(ORDERS, order_body(day.date), format="json")
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens: refused

    run_task_worker()
    assert Order.objects.get().confirmation_sent_at is None

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    clock.shift(dt.timedelta(minutes=1, seconds=1))
    run_task_worker()

    assert len(mail.outbox) == 1
    assert Order.objects.get().confirmation_sent_at is not None


def attempts_of(order: Order) -> list[DBTaskResult]:
    """The order email's task results (the backend's table, read by the test)."""
    return list(
        DBTaskResult.objects.filter(
            task_path=tasks.send_order_confirmation_email.module_path,
            args_kwargs__kwargs__order_id=str(order.pk),
        )
    )


def test_each_attempt_is_recorded_on_the_order_until_one_sends(visitor_client, settings, clock):
    day = MuseumDayFactory(date=later())
    visitor_client.post(ORDERS, order_body(day.date), format="json")
    order = Order.objects.get()
    [first] = attempts_of(order)
    assert order.confirmation_task_id == str(first.pk)
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens: refused

    run_task_worker()
    order.refresh_from_db()
    [retry] = [result for result in attempts_of(order) if result.pk != first.pk]
    assert order.confirmation_task_id == str(retry.pk)
    assert tasks.requeue_lost_order_confirmations() == 0  # its retry waits: not lost

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    clock.shift(dt.timedelta(minutes=1, seconds=1))
    run_task_worker()
    order.refresh_from_db()
    assert order.confirmation_sent_at is not None and order.confirmation_task_id == ""


def die_mid_attempt(order: Order) -> None:
    """What a worker killed while sending leaves: its task result running forever, and the
    email claimed by its attempt, unsent."""
    [lost] = attempts_of(order)
    lost.claim("a-worker-that-died")
    assert tasks.claim_confirmation(order_id=order.pk, attempt=1) is not None


def test_an_attempt_lost_with_its_worker_is_enqueued_again(visitor_client, clock):
    day = MuseumDayFactory(date=later())
    visitor_client.post(ORDERS, order_body(day.date), format="json")
    order = Order.objects.get()
    die_mid_attempt(order)

    run_task_worker()
    assert not mail.outbox
    assert tasks.requeue_lost_order_confirmations() == 0  # perhaps still sending

    clock.shift(LOST_AFTER + dt.timedelta(seconds=1))
    assert tasks.requeue_lost_order_confirmations() == 1
    assert tasks.requeue_lost_order_confirmations() == 0  # its next attempt is waiting: not lost
    run_task_worker()
    assert not mail.outbox  # the next attempt waits as after a failure

    clock.shift(RETRY.wait(1))
    run_task_worker()
    [message] = mail.outbox
    assert order.confirmation_code in message.body
    order.refresh_from_db()
    assert order.confirmation_sent_at is not None and order.confirmation_attempt == 2
    assert tasks.requeue_lost_order_confirmations() == 0  # sent: nothing more


def test_an_email_lost_on_its_last_attempt_is_given_up(visitor_client, clock):
    day = MuseumDayFactory(date=later())
    visitor_client.post(ORDERS, order_body(day.date), format="json")
    order = Order.objects.get()
    die_mid_attempt(order)
    Order.objects.filter(pk=order.pk).update(confirmation_attempt=RETRY.attempts)

    clock.shift(LOST_AFTER + dt.timedelta(seconds=1))
    assert tasks.requeue_lost_order_confirmations() == 1
    order.refresh_from_db()
    assert order.confirmation_task_id == "" and order.confirmation_claimed_at is None
    clock.shift(dt.timedelta(days=1))
    run_task_worker()
    assert not mail.outbox


def test_a_held_order_is_mailed_when_confirmed_not_before(visitor_client):
    day = MuseumDayFactory(date=later())
    answer = visitor_client.post(ORDERS, order_body(day.date, hold=True), format="json")
    assert answer.status_code == 201, answer.content
    held = answer.json()

    run_task_worker()
    assert not mail.outbox

    visitor_client.post(f"{ORDERS}/{held['orderId']}/confirm")
    order = Order.objects.get()
    assert order.confirmation_task_id == str(attempts_of(order)[0].pk)  # found if it is lost
    run_task_worker()
    assert len(mail.outbox) == 1


def test_the_periodic_job_gives_back_expired_holds_within_a_minute(visitor_client, clock):
    day = MuseumDayFactory(date=later(), capacity=10)
    held = visitor_client.post(ORDERS, order_body(day.date, ("adult", 3), hold=True), format="json")
    assert MuseumDay.objects.get(pk=day.pk).sold == 3

    clock.shift(dt.timedelta(minutes=11))
    run_task_worker()

    assert Order.objects.get(pk=held.json()["orderId"]).status == "expired"
    assert MuseumDay.objects.get(pk=day.pk).sold == 0


def test_an_event_name_stored_with_a_line_break_is_mailed_on_one_line(visitor_client):
    # Written before names refused control characters: the factory saves it as it is.
    event = SpecialEventFactory(name="Night tour\r\nBcc: x@example.org", dates=[later()])
    body = order_body(later(), ticketType="event", eventId=str(event.pk))
    assert visitor_client.post(ORDERS, body, format="json").status_code == 201

    run_task_worker()

    [message] = mail.outbox
    assert message.subject.startswith("Your 1 ticket for Night tour  Bcc: x@example.org on ")
    assert message.recipients() == ["family@example.com"] and not message.bcc
    assert "Visit: Night tour  Bcc: x@example.org\n" in message.body
    assert Order.objects.get().confirmation_sent_at is not None


def test_an_order_cancelled_before_its_email_went_gets_one_email_saying_so(visitor_client):
    day = MuseumDayFactory(date=later(days=5))
    placed = visitor_client.post(ORDERS, order_body(day.date), format="json").json()
    assert visitor_client.post(f"{ORDERS}/{placed['orderId']}/cancel").status_code == 200

    run_task_worker()

    [message] = mail.outbox
    assert message.subject == f"Your order {placed['confirmationCode']} is cancelled"
    assert "No ticket of this order is valid any more." in message.body
    # No tickets, no visit: the invoice issued when it was confirmed, and its credit note.
    assert [name[0] for name, _, _ in message.attachments] == ["I", "C"]
    assert tasks.requeue_lost_order_confirmations() == 0


def test_a_hold_let_go_is_mailed_nothing(visitor_client):
    day = MuseumDayFactory(date=later(days=5))
    held = visitor_client.post(ORDERS, order_body(day.date, hold=True), format="json").json()
    assert visitor_client.post(f"{ORDERS}/{held['orderId']}/cancel").status_code == 200

    run_task_worker()

    assert mail.outbox == []


def test_a_held_order_with_a_ticket_cancelled_mails_what_it_still_holds(visitor_client):
    day = MuseumDayFactory(date=later())
    body = order_body(day.date, ("adult", 1), ("child", 1), hold=True)
    held = visitor_client.post(ORDERS, body, format="json").json()
    child = next(t for t in held["tickets"] if t["category"] == "child")
    cancelled = visitor_client.post(
        f"{ORDERS}/{held['orderId']}/tickets/{child['ticketId']}/cancel"
    )
    assert cancelled.json()["total"] == 15.0

    visitor_client.post(f"{ORDERS}/{held['orderId']}/confirm")
    run_task_worker()

    [message] = mail.outbox
    assert message.subject.startswith("Your 1 ticket for general entry")
    assert child["confirmationCode"] not in message.body and "Total: €15.00" in message.body
    assert "1 Adult at €15.00" in message.body and "Child" not in message.body
    [(_, pdf, _), _, _] = message.attachments  # the tickets, the visit, the invoice
    assert (
        pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page\r") + pdf.count(b"/Type /Page ") == 1
    )


def test_the_email_after_a_change_counts_toward_the_mailbox_limit_and_keeps_to_it(
    online_client, settings
):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 2
    day = MuseumDayFactory(date=later())
    held = online_client.post(ORDERS, order_body(day.date, ("adult", 3)), format="json").json()
    payments = f"{ORDERS}/{held['orderId']}/payments"
    payment = online_client.post(payments, {"provider": "demo"}, format="json").json()
    Client().post(payment["payUrl"], {"outcome": "pay"})
    first, second, _ = (ticket["ticketId"] for ticket in held["tickets"])

    online_client.post(f"{ORDERS}/{held['orderId']}/tickets/{first}/cancel")
    online_client.post(f"{ORDERS}/{held['orderId']}/tickets/{second}/cancel")  # over the limit

    kinds = BuyerEmail.objects.filter(order_id=held["orderId"]).values_list("kind", flat=True)
    assert sorted(kinds) == ["change", "confirmation"]


def test_an_attempt_mailing_the_order_as_it_was_leaves_a_change_to_the_next(visitor_client):
    day = MuseumDayFactory(date=later())
    placed = visitor_client.post(ORDERS, order_body(day.date, ("adult", 2)), format="json").json()
    order_id = uuid.UUID(placed["orderId"])
    # An attempt claims the email of two tickets and is making it...
    claimed_at = tasks.claim_confirmation(order_id=order_id, attempt=1)
    # ...while the buyer cancels one (answered at once: the attempt holds no lock)...
    first = placed["tickets"][0]["ticketId"]
    assert visitor_client.post(f"{ORDERS}/{order_id}/tickets/{first}/cancel").status_code == 200
    # ...and then its email goes.
    tasks.record_sent(order_id=order_id, attempt=1, claimed_at=claimed_at)

    run_task_worker()

    [changed] = mail.outbox  # the order as it is now, once
    assert changed.subject.startswith(f"Your order {placed['confirmationCode']} has changed")
    assert "Still valid: €15.00\n" in changed.body
