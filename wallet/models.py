from django.db import models
from django.db.models import Q
from django_walletpass.models import Pass

from giftcards.models import GiftCard
from orders.models import Membership, Ticket
from wallet.content import GIFT_CARD, MEMBERSHIP, TICKET

# What building a kept pass (ApplePass) or object (GoogleObject) again reads of its owner,
# whichever it is: one query for them all.
OWNERS_RELATED = (
    "ticket__order",
    "ticket__event",
    "ticket__slot",
    "ticket__category",
    "membership__membership_type",
    "gift_card",
)


class PassOf(models.Model):
    """Whose pass a row keeps: exactly one ticket, member card or gift card, a foreign key each,
    so each row's owner is a real, deleted-with-it row (`of_exactly_one` checks that one and
    only one is set)."""

    ticket = models.ForeignKey(
        Ticket, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    membership = models.ForeignKey(
        Membership, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    gift_card = models.ForeignKey(
        GiftCard, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )

    class Meta:
        abstract = True

    @property
    def kind(self) -> str:
        """Whose pass it is, in wallet.content's words (TICKET, MEMBERSHIP, GIFT_CARD)."""
        if self.ticket_id is not None:
            return TICKET
        return MEMBERSHIP if self.membership_id is not None else GIFT_CARD

    @property
    def owner(self) -> Ticket | Membership | GiftCard:
        return self.ticket or self.membership or self.gift_card  # type: ignore[return-value]


def of_exactly_one(name: str) -> models.CheckConstraint:
    return models.CheckConstraint(
        name=name,
        condition=(
            Q(ticket__isnull=False, membership__isnull=True, gift_card__isnull=True)
            | Q(ticket__isnull=True, membership__isnull=False, gift_card__isnull=True)
            | Q(ticket__isnull=True, membership__isnull=True, gift_card__isnull=False)
        ),
    )


class ApplePass(PassOf):
    """A pass's .pkpass as last built, beside the library's `Pass` (serial number, random
    authentication token, the devices registered for it): kept in the database as the tickets'
    PDFs and images are, so every server answers Apple with the same bytes. The pass of exactly
    one ticket, member card or gift card (PassOf)."""

    pazz = models.OneToOneField(
        Pass, on_delete=models.CASCADE, primary_key=True, related_name="museum_pass"
    )
    # What pass.json said when it was built (wallet.apple.fingerprint): another value now means
    # the pass is stale, is built again, and its Pass's updated_at moves (Apple's Last-Modified).
    fingerprint = models.CharField(max_length=64)
    pkpass = models.BinaryField()

    class Meta:
        verbose_name = "Apple Wallet pass"
        constraints = [of_exactly_one("apple_pass_of_exactly_one")]

    def __str__(self):
        return str(self.pazz_id)


class GoogleObject(PassOf):
    """A pass saved in Google Wallet's API (by its save link's request), kept so that a change of
    its owner saves it again (wallet/tasks.py): Google shows what the object says, and nothing
    else tells it. The object of exactly one ticket, member card or gift card, as ApplePass's."""

    # Google's id for it, "{issuer}.{serial}", and the REST resource it is ("eventTicketObject").
    object_id = models.CharField(max_length=200, unique=True)
    resource = models.CharField(max_length=40)
    # When it was last written to Google (by a save link's request or an update).
    saved_at = models.DateTimeField()

    class Meta:
        verbose_name = "Google Wallet object"
        constraints = [of_exactly_one("google_object_of_exactly_one")]

    def __str__(self):
        return self.object_id
