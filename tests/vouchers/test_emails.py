"""A batch's codes mailed, one an address, by the task queue after the commit, in the museum's
language; each email counted toward its mailbox's daily limit, none sent past it, none sent
for a batch refused."""

import pytest
from django.core import mail

from orders.models import Voucher
from tests.conftest import assert_problem, run_task_worker
from tests.factories import OrderFactory
from vouchers.models import VoucherEmail

pytestmark = pytest.mark.django_db(transaction=True)

BATCH = "/v1.1/vouchers/batch"


@pytest.fixture(autouse=True)
def museum(settings):
    settings.MUSEUM_NAME = "Rijksmuseum Test"


def test_each_address_gets_its_own_code_after_the_commit(staff_client):
    emails = ["ada@example.com", "grace@example.com", "alan@example.com"]

    answer = staff_client.post(
        BATCH,
        {
            "effect": "amount_off",
            "value": 5,
            "prefix": "MAIL",
            "emails": emails,
            "validUntil": "2030-07-01T00:00:00+02:00",
            "tag": "newsletter",
        },
        format="json",
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["emailed"] == 3
    assert not mail.outbox

    run_task_worker()

    assert len(mail.outbox) == 3
    sent = {message.to[0]: message for message in mail.outbox}
    for email in VoucherEmail.objects.select_related("voucher"):
        message = sent[email.email]
        assert email.sent_at is not None and email.voucher.code in message.body
        assert message.subject == "Your voucher from Rijksmuseum Test"
        assert "5.00 off the entry" in message.body and "30 Jun 2030" in message.body
    assert {e.voucher.code for e in VoucherEmail.objects.all()} == set(answer.json()["codes"])

    run_task_worker()
    assert len(mail.outbox) == 3  # each claimed once


def test_a_mailbox_past_its_daily_limit_gets_no_code(staff_client, settings):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 1
    order = OrderFactory(email="full@example.com", mailbox="full@example.com")
    order.emails.create(kind="confirmation")

    answer = staff_client.post(
        BATCH, {"effect": "free", "emails": ["Full@example.com", "free@example.com"]}, format="json"
    )
    assert answer.status_code == 201, answer.content
    run_task_worker()

    assert [message.to for message in mail.outbox] == [["free@example.com"]]
    skipped = VoucherEmail.objects.get(mailbox="full@example.com")
    assert skipped.sent_at is None and skipped.skipped
    assert Voucher.objects.count() == 2  # the code stands; staff hand it over another way


def test_a_batch_refused_mails_nothing(staff_client):
    Voucher.objects.create(code="CLASH", effect="free")

    answer = staff_client.post(
        BATCH,
        {"effect": "free", "codes": ["A1", "clash"], "emails": ["a@example.com", "b@example.com"]},
        format="json",
    )
    run_task_worker()

    assert_problem(answer, 409)
    assert not mail.outbox and not VoucherEmail.objects.exists()
