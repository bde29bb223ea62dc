"""A voucher's code mailed to an address (a batch's `emails`): what the email's task claims and
sends, and what the mailbox's daily limit of emails counts."""

from django.db import models

from orders.models import Voucher


class VoucherEmail(models.Model):
    """One code mailed to one address, claimed once by its task (`sent_at`)."""

    voucher = models.ForeignKey(Voucher, on_delete=models.CASCADE, related_name="emails")
    email = models.EmailField(max_length=254)
    # The address as every limit counts it (orders.services.limits.mailbox_of).
    mailbox = models.CharField(max_length=254, db_index=True)
    language = models.CharField(max_length=10)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Why it was not sent: its mailbox's limit reached.
    skipped = models.CharField(max_length=60, blank=True)

    class Meta:
        verbose_name = "voucher email"

    def __str__(self):
        return f"{self.voucher_id} to {self.email}"
