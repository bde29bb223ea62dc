"""Buyers' email and phone, kept on their orders: kept for the retention period only, and never
written to the logs."""

import datetime as dt
import logging
from decimal import Decimal
from io import StringIO

import pytest
from aiosmtpd.controller import Controller
from django.core.management import call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from orders import tasks
from orders.models import ANONYMISED_EMAIL, Order, Ticket
from orders.notifications import describe_mail_error
from orders.services.personal_data import anonymise_old_orders
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, SpecialEventFactory, TicketFactory, UserFactory
from tests.servers import free_port

BUYER = "ada.lovelace@example.com"


def days_ago(days: int) -> dt.date:
    return timezone.localdate() - dt.timedelta(days=days)


def anonymise() -> str:
    out = StringIO()
    call_command("anonymise_tickets", stdout=out)
    return out.getvalue()


@pytest.fixture
def retention(settings):
    settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS = 30
    return 30


def test_tickets_past_the_retention_period_lose_email_and_phone_and_keep_the_admission(
    db, retention
):
    staff = UserFactory(username="door", is_staff=True)
    event = SpecialEventFactory(dates=[days_ago(31)])
    old = TicketFactory(
        ticket_type="event",
        event=event,
        date=days_ago(31),
        email=BUYER,
        phone="+44 20 7946 0000",
        price=Decimal("12.50"),
        checked_in_at=timezone.now() - dt.timedelta(days=31),
        checked_in_by=staff,
    )
    last_day_kept = TicketFactory(date=days_ago(30), email=BUYER, phone="+44 20 7946 0001")
    upcoming = TicketFactory(date=days_ago(-3), email=BUYER)
    before = Ticket.objects.get(pk=old.pk)

    assert anonymise().startswith("1 orders anonymised")

    old.refresh_from_db()
    assert (old.order.email, old.order.phone) == (ANONYMISED_EMAIL, "")
    kept = ["buyer_id", "ticket_type", "date", "event_id", "price", "confirmation_code"]
    kept += ["purchased_at", "cancelled_at", "checked_in_at", "checked_in_by_id"]
    assert {name: getattr(old, name) for name in kept} == {
        name: getattr(before, name) for name in kept
    }
    last_day_kept.order.refresh_from_db()
    upcoming.order.refresh_from_db()
    assert (last_day_kept.order.email, last_day_kept.order.phone) == (BUYER, "+44 20 7946 0001")
    assert upcoming.order.email == BUYER
    # Idempotent: a second run finds nothing left to do.
    assert anonymise().startswith("0 orders anonymised")


def test_the_retention_period_comes_from_the_setting(db, settings):
    settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS = 7
    week_old = TicketFactory(date=days_ago(8))
    recent = TicketFactory(date=days_ago(7))

    assert anonymise_old_orders() == 1

    assert Order.objects.get(pk=week_old.order_id).email == ANONYMISED_EMAIL
    assert Order.objects.get(pk=recent.order_id).email == "ada@example.com"


def test_many_tickets_are_anonymised_a_batch_at_a_time_not_a_row_at_a_time(
    db, retention, django_assert_max_num_queries
):
    TicketFactory.create_batch(25, date=days_ago(60), phone="+31 20 123 4567")

    # Per batch: the ids, the orders' UPDATE and their audit records (read, and the test's
    # savepoint and release); then the empty look that ends it.
    with django_assert_max_num_queries(3 * 5 + 1):
        assert anonymise_old_orders(batch_size=10) == 25

    assert set(Order.objects.values_list("email", "phone")) == {(ANONYMISED_EMAIL, "")}


class RefusingRecipients:
    """An SMTP server that refuses every recipient, quoting the address as real servers do."""

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown"


@pytest.fixture
def refusing_smtp_server(settings):
    controller = Controller(RefusingRecipients(), hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_HOST_USER, settings.EMAIL_HOST_PASSWORD = "", ""
    yield controller
    controller.stop()


@pytest.mark.django_db(transaction=True)  # the task worker commits
def test_a_refused_recipient_is_logged_and_kept_without_the_address(refusing_smtp_server, caplog):
    day = MuseumDayFactory(date=timezone.localdate() + dt.timedelta(days=3))
    order = TicketFactory(date=day.date, email=BUYER).order
    tasks.mail_confirmation(order=order)
    order.save()
    caplog.set_level(logging.WARNING, logger="orders.tasks")

    run_task_worker()

    order.refresh_from_db()
    assert order.confirmation_sent_at is None
    [failed_attempt] = DBTaskResult.objects.filter(status="FAILED")
    [record] = [r for r in caplog.records if r.name == "orders.tasks"]
    for text in (record.getMessage(), failed_attempt.traceback):
        # The mail server's words, the class and the reason, arrive; the address does not.
        assert text.count("SMTPRecipientsRefused") == 1 and "Recipient address rejected" in text
        assert "ada.lovelace" not in text and "example.com" not in text
        assert "<address>" in text


@pytest.mark.parametrize(
    "address",
    [
        "ada@example.com",
        '"ada lovelace"@example.com',
        "ada+tickets@sub.example.org",
        "ada@[192.0.2.1]",
        "ADA@EXAMPLE.COM",
    ],
)
def test_every_shape_of_address_is_scrubbed_from_a_mail_error(settings, address):
    settings.EMAIL_HOST_PASSWORD = "s3cret"
    error = ConnectionError(f"refused {address}: no such user; signed in with s3cret")

    described = describe_mail_error(error)

    assert described == "ConnectionError: refused <address>: no such user; signed in with ********"
