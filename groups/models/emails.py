"""A group's emails: one row each, enqueued in the transaction of the step it tells (a request
received, approved, moved, declined...), claimed once by its task and sent after the commit, and
counted toward its mailbox's daily limit of emails like every email (groups.tasks)."""

from django.db import models

from .requests import GroupRequest


class GroupEmailKind(models.TextChoices):
    RECEIVED = "received", "Request received"
    APPROVED = "approved", "Approved: confirmed, invoice due"
    OFFERED = "offered", "Another time offered"
    DECLINED = "declined", "Declined"
    EXPIRED = "expired", "Expired unanswered"
    CHANGED = "changed", "Numbers changed"
    CANCELLED = "cancelled", "Visit cancelled"
    DEPOSIT_REMINDER = "deposit_reminder", "Deposit reminder"
    BALANCE_REMINDER = "balance_reminder", "Balance reminder"


class GroupEmail(models.Model):
    """One email about a group's request, to the group or to staff (`to_staff`), claimed once by
    its task (`sent_at`)."""

    group = models.ForeignKey(GroupRequest, on_delete=models.CASCADE, related_name="emails")
    kind = models.CharField(max_length=20, choices=GroupEmailKind.choices)
    # Staff's copy (MUSEUM_GROUP_STAFF_EMAIL): the museum's own mailbox, not counted or limited.
    to_staff = models.BooleanField(default=False)
    email = models.EmailField(max_length=254)
    # The address as every limit counts it (orders.services.limits.mailbox_of).
    mailbox = models.CharField(max_length=254, db_index=True)
    language = models.CharField(max_length=10)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Why it was not sent: its mailbox's limit reached.
    skipped = models.CharField(max_length=60, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]
        verbose_name = "group email"

    def __str__(self):
        return f"{self.kind} of {self.group_id} to {self.email}"
