from django.db import models
from django.db.models import Q
from django_walletpass.models import Pass

from giftcards.models import GiftCard
from orders.models import Membership, Ticket


class ApplePass(models.Model):
    """A pass's .pkpass as last built, beside the library's `Pass` (serial number, random
    authentication token, the devices registered for it): kept in the database as the tickets'
    PDFs and images are, so every server answers Apple with the same bytes. The pass of exactly
    one ticket, member card or gift card: a foreign key each, so each row's owner is a real,
    deleted-with-it row, and a check that one and only one is set."""

    pazz = models.OneToOneField(
        Pass, on_delete=models.CASCADE, primary_key=True, related_name="museum_pass"
    )
    ticket = models.ForeignKey(
        Ticket, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    membership = models.ForeignKey(
        Membership, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    gift_card = models.ForeignKey(
        GiftCard, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # What pass.json said when it was built (wallet.apple.fingerprint): another value now means
    # the pass is stale, is built again, and its Pass's updated_at moves (Apple's Last-Modified).
    fingerprint = models.CharField(max_length=64)
    pkpass = models.BinaryField()

    class Meta:
        verbose_name = "Apple Wallet pass"
        constraints = [
            models.CheckConstraint(
                name="apple_pass_of_exactly_one",
                condition=(
                    Q(ticket__isnull=False, membership__isnull=True, gift_card__isnull=True)
                    | Q(ticket__isnull=True, membership__isnull=False, gift_card__isnull=True)
                    | Q(ticket__isnull=True, membership__isnull=True, gift_card__isnull=False)
                ),
            )
        ]

    def __str__(self):
        return str(self.pazz_id)
