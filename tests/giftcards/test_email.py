"""A gift card's email: sent when the card is issued, after the commit, to the card's address in
its language with its PDF attached, by the one pipeline of every order's email (claimed, retried,
within the mailbox's daily limit and counted toward it)."""

import datetime as dt

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from giftcards import cards
from giftcards.models import GiftCard
from museum import i18n
from orders.models import BuyerEmail, Order
from tests.conftest import run_task_worker
from tests.giftcards.test_gift_cards import buy_card

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def museum(settings):
    settings.MUSEUM_NAME = "Rijksmuseum Test"


def test_the_card_is_mailed_once_issued_in_its_language_with_its_pdf(visitor_client):
    bought = buy_card(visitor_client, amount=50, language="de")  # a partner's: issued at once
    assert not mail.outbox  # the worker sends it, after the commit

    run_task_worker()
    run_task_worker()

    [message] = mail.outbox
    card = GiftCard.objects.get(pk=bought["giftCardId"])
    assert message.to == [card.email] == ["giver@example.com"]
    assert message.subject == "Ihre Geschenkkarte von Rijksmuseum Test"
    assert card.code in message.body and "Wert: 50,00\xa0€" in message.body
    with i18n.speaking("de"):
        assert i18n.day_in_words(card.expires_on) in message.body
    [(html, kind)] = message.alternatives
    assert kind == "text/html" and card.code in html and 'lang="de"' in html
    [(name, pdf, media_type)] = message.attachments
    assert name == f"gift-card-{card.code[-4:]}.pdf" and media_type == "application/pdf"
    assert pdf == cards.card_pdf(card)  # the kept card, drawn once
    assert Order.objects.get(pk=bought["orderId"]).confirmation_sent_at is not None


def test_a_card_not_paid_is_not_mailed_and_its_email_goes_once_it_is(online_client, staff_client):
    bought = buy_card(online_client)

    run_task_worker()
    assert not mail.outbox

    paid = staff_client.post(
        f"/v1.1/orders/{bought['orderId']}/payments", {"provider": "desk"}, format="json"
    )
    assert paid.status_code == 201, paid.content
    run_task_worker()

    [message] = mail.outbox
    assert GiftCard.objects.get(pk=bought["giftCardId"]).code in message.body
    # An online buyer's mailbox counts it, as every email.
    kinds = BuyerEmail.objects.filter(order_id=bought["orderId"]).values_list("kind", flat=True)
    assert list(kinds) == [BuyerEmail.Kind.CONFIRMATION]


def test_past_the_mailboxs_daily_limit_the_card_is_issued_but_not_mailed(
    online_client, staff_client, settings
):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 1
    for _ in range(2):
        bought = buy_card(online_client)
        staff_client.post(
            f"/v1.1/orders/{bought['orderId']}/payments", {"provider": "desk"}, format="json"
        )

    run_task_worker()

    assert len(mail.outbox) == 1
    assert GiftCard.objects.filter(issued_at__isnull=False).count() == 2
    assert BuyerEmail.objects.count() == 1


def test_a_failed_email_is_tried_again_later(visitor_client, settings):
    with time_machine.travel(timezone.now(), tick=False) as clock:
        buy_card(visitor_client)
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens: refused

        run_task_worker()
        assert Order.objects.get().confirmation_sent_at is None

        settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
        clock.shift(dt.timedelta(minutes=1, seconds=1))
        run_task_worker()

    [message] = mail.outbox
    assert message.attachments[0][2] == "application/pdf"
    assert Order.objects.get().confirmation_sent_at is not None
