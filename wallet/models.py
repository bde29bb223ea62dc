from django.db import models
from django_walletpass.models import Pass

from orders.models import Ticket


class ApplePass(models.Model):
    """A ticket's .pkpass as last built, beside the library's `Pass` (serial number, random
    authentication token, the devices registered for it): kept in the database as the tickets'
    PDFs and images are, so every server answers Apple with the same bytes."""

    pazz = models.OneToOneField(
        Pass, on_delete=models.CASCADE, primary_key=True, related_name="museum_pass"
    )
    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="+")
    # What pass.json said when it was built (wallet.apple.fingerprint): another value now means
    # the pass is stale, is built again, and its Pass's updated_at moves (Apple's Last-Modified).
    fingerprint = models.CharField(max_length=64)
    pkpass = models.BinaryField()

    class Meta:
        verbose_name = "Apple Wallet pass"

    def __str__(self):
        return str(self.pazz_id)
