"""An order's one email and the release of expired holds, through the task worker."""

import datetime as dt
import re

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from hours.models import MuseumDay
from orders.models import Order
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory
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
    [(name, content, kind)] = message.attachments
    assert kind == "application/pdf" and name == f"{answer.json()['confirmationCode']}.pdf"
    assert pdf_pages(content) == 3
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


def test_a_held_order_is_mailed_when_confirmed_not_before(visitor_client):
    day = MuseumDayFactory(date=later())
    answer = visitor_client.post(ORDERS, order_body(day.date, hold=True), format="json")
    assert answer.status_code == 201, answer.content
    held = answer.json()

    run_task_worker()
    assert not mail.outbox

    visitor_client.post(f"{ORDERS}/{held['orderId']}/confirm")
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
