"""A waiting list's offers mailed: each email a row (OfferEmail) enqueued in the transaction that
makes the offer, so an offer rolled back mails nothing and one made is never lost; its task
claims the row once (a conditional UPDATE), then sends, outside any transaction, holding no lock.

Each email counts toward its mailbox's daily limit of emails (MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY,
with the orders', vouchers' and groups' emails to it): past it, it is not sent (`skipped`); the
offer stands all the same, and its buyer reads it on the waiting list (GET .../waiting-list).
"""

import logging

from django.utils import timezone
from django_tasks import task

from drops.models import OfferEmail, WaitingEntry
from drops.notifications import send_offer
from orders.services.limits import mailbox_full, mailbox_of

logger = logging.getLogger(__name__)

MAILBOX_LIMIT = "the mailbox's daily limit of emails"
WITHDRAWN = "the offer's voucher was deleted"


def mail_offer(entry: WaitingEntry) -> None:
    """In the caller's transaction: the entry's offer, in its language, enqueued (none for an
    account without an address: it reads the offer on the waiting list)."""
    if not entry.email:
        return
    email = OfferEmail.objects.create(
        entry=entry, email=entry.email, mailbox=mailbox_of(entry.email), language=entry.language
    )
    send_offer_email.enqueue(offer_email_id=email.pk)


@task()
def send_offer_email(*, offer_email_id: int) -> str:
    """One attempt: claim the email, unless its mailbox had its day's emails, then send it."""
    now = timezone.now()
    email = (
        OfferEmail.objects.select_related(
            "entry__drop",
            "entry__voucher__keep_slot",
            "entry__voucher__keep_event_date__event",
        )
        .filter(pk=offer_email_id)
        .first()
    )
    if email is None or email.sent_at is not None or email.skipped:
        return "nothing to do"
    skipped = WITHDRAWN if email.entry.voucher is None else None
    if skipped is None and mailbox_full(email.mailbox, now=now):
        skipped = MAILBOX_LIMIT
    if skipped is not None:
        OfferEmail.objects.filter(pk=email.pk, sent_at=None).update(skipped=skipped)
        logger.warning("Offer email %s: not sent, %s", email.pk, skipped)
        return "skipped: " + skipped
    if not OfferEmail.objects.filter(pk=email.pk, sent_at=None, skipped="").update(sent_at=now):
        return "nothing to do: sent already"
    send_offer(email)
    return "sent"


def offers_sent(mailbox: str, since) -> int:
    """The offers mailed to the mailbox since then (orders.services.limits.mailbox_full)."""
    return OfferEmail.objects.filter(mailbox=mailbox, sent_at__gt=since).count()
