"""A group's emails: each one a row (GroupEmail) enqueued in the transaction of the step it tells
(groups.services call `mail_group` inside theirs), so a step refused mails nothing and one made
is never lost; its task claims the row once (a conditional UPDATE), then sends, outside any
transaction, holding no lock.

Each email to the group counts toward its mailbox's daily limit of emails
(MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY, the orders' and vouchers' emails to it counted too):
past it, it is not sent (`skipped`), so the public form cannot flood someone's mailbox. Staff's
copies (a new request, one expired: MUSEUM_GROUP_STAFF_EMAIL) go to the museum's own mailbox and
are neither counted nor limited.
"""

import logging

from django.conf import settings
from django.utils import timezone
from django_tasks import task

from groups.models import GroupEmail, GroupEmailKind, GroupRequest
from groups.notifications import send_group_email as send
from orders.services.limits import mailbox_full, mailbox_of

logger = logging.getLogger(__name__)

MAILBOX_LIMIT = "the mailbox's daily limit of emails"
# The steps staff are told of too.
STAFF_KINDS = {GroupEmailKind.RECEIVED, GroupEmailKind.EXPIRED}


def mail_group(group: GroupRequest, kind: str) -> None:
    """In the caller's transaction: the group's email of `kind` (a GroupEmailKind) in its
    language, and staff's copy of a new or expired request, each enqueued."""
    kind = GroupEmailKind(kind)
    emails = [
        GroupEmail(
            group=group,
            kind=kind,
            email=group.email,
            mailbox=group.mailbox or mailbox_of(group.email),
            language=group.language,
        )
    ]
    if kind in STAFF_KINDS and settings.MUSEUM_GROUP_STAFF_EMAIL:
        staff = settings.MUSEUM_GROUP_STAFF_EMAIL
        emails.append(
            GroupEmail(
                group=group,
                kind=kind,
                to_staff=True,
                email=staff,
                mailbox=mailbox_of(staff),
                language=settings.MUSEUM_LANGUAGE,
            )
        )
    for email in GroupEmail.objects.bulk_create(emails):
        send_group_email.enqueue(group_email_id=email.pk)


@task()
def send_group_email(*, group_email_id: int) -> str:
    """One attempt: claim the email, unless its mailbox had its day's emails, then send it."""
    now = timezone.now()
    email = (
        GroupEmail.objects.select_related("group__tour", "group__order")
        .filter(pk=group_email_id)
        .first()
    )
    if email is None or email.sent_at is not None or email.skipped:
        return "nothing to do"
    if not email.to_staff and mailbox_full(email.mailbox, now=now):
        GroupEmail.objects.filter(pk=email.pk, sent_at=None).update(skipped=MAILBOX_LIMIT)
        logger.warning("Group email %s: not sent, %s", email.pk, MAILBOX_LIMIT)
        return "skipped: " + MAILBOX_LIMIT
    if not GroupEmail.objects.filter(pk=email.pk, sent_at=None, skipped="").update(sent_at=now):
        return "nothing to do: sent already"
    send(email)
    return "sent"


def group_emails_sent(mailbox: str, since) -> int:
    """The groups' emails sent the mailbox since then (orders.services.limits.mailbox_full);
    staff's copies go to the museum's own."""
    return GroupEmail.objects.filter(mailbox=mailbox, to_staff=False, sent_at__gt=since).count()
