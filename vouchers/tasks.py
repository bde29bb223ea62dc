"""A batch's codes mailed, one an address: each email a row (VoucherEmail) enqueued in the
batch's transaction, so a batch refused mails nothing and one made is never lost; its task
claims the row once (a conditional UPDATE), then sends, outside any transaction.

Each email counts toward its mailbox's daily limit of emails (MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY,
the orders' emails to it counted too): past it, the code is kept and not mailed (`skipped`).
"""

import logging
from collections.abc import Sequence

from django.utils import timezone
from django_tasks import task

from museum import i18n
from orders.models import Voucher
from orders.services.limits import mailbox_full, mailbox_of
from vouchers.models import VoucherEmail
from vouchers.notifications import send_code

logger = logging.getLogger(__name__)

MAILBOX_LIMIT = "the mailbox's daily limit of emails"


def mail_codes(*, vouchers: Sequence[Voucher], emails: Sequence[str]) -> None:
    """In the caller's transaction: each voucher's code to its address, in the museum's
    language, each email counted and enqueued."""
    made = VoucherEmail.objects.bulk_create(
        VoucherEmail(
            voucher=voucher,
            email=email,
            mailbox=mailbox_of(email),
            language=i18n.museum_language_code(),
        )
        for voucher, email in zip(vouchers, emails, strict=True)
    )
    for email in made:
        send_voucher_email.enqueue(voucher_email_id=email.pk)


@task()
def send_voucher_email(*, voucher_email_id: int) -> str:
    """One attempt: claim the email, unless its mailbox had its day's emails, then send it."""
    now = timezone.now()
    email = VoucherEmail.objects.select_related("voucher").filter(pk=voucher_email_id).first()
    if email is None or email.sent_at is not None or email.skipped:
        return "nothing to do"
    if mailbox_full(email.mailbox, now=now):
        VoucherEmail.objects.filter(pk=email.pk, sent_at=None).update(skipped=MAILBOX_LIMIT)
        logger.warning("Voucher email %s: not sent, %s", email.pk, MAILBOX_LIMIT)
        return "skipped: " + MAILBOX_LIMIT
    if not VoucherEmail.objects.filter(pk=email.pk, sent_at=None).update(sent_at=now):
        return "nothing to do: sent already"
    send_code(email)
    return "sent"


def codes_sent(mailbox: str, since) -> int:
    """The codes mailed to the mailbox since then (orders.services.limits.mailbox_full)."""
    return VoucherEmail.objects.filter(mailbox=mailbox, sent_at__gt=since).count()
