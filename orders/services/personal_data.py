"""The buyer's personal data: an order's email and phone, kept for
MUSEUM_PERSONAL_DATA_RETENTION_DAYS after its date, then replaced; a member's name and email, kept
while the membership is valid and for as long after it ended (expired, cancelled, or never paid),
then replaced and its kept card deleted."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from audit.services import forget_personal_data
from orders.models import (
    ANONYMISED_EMAIL,
    Membership,
    MembershipCard,
    MembershipSale,
    MembershipStatus,
    Order,
    OrderStatus,
)


def anonymise_old_orders(*, batch_size: int = 1000) -> int:
    """Replace the buyer's email, phone and name on orders past the retention period; how many.

    Kept: the order, its tickets (date, type, event, price, code, check-in and by whom), its
    refunds and the buyer's account. Idempotent: an anonymised order no longer matches. An email
    still unsent is never sent (the email's task skips an anonymised order). A batch a
    statement, so each UPDATE stays short however many orders are due.
    """
    cutoff = timezone.localdate() - timedelta(days=settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS)
    due = (
        Order.objects.filter(date__lt=cutoff)
        .filter(~Q(email=ANONYMISED_EMAIL) | ~Q(phone="") | ~Q(name=""))
        .order_by()
        .values_list("pk", flat=True)
    )
    anonymised = 0
    while batch := list(due[:batch_size]):
        # Its row locks wait for a worker sending an order's email, which then finds the order
        # anonymised and sends nothing.
        with transaction.atomic():
            anonymised += Order.objects.filter(pk__in=batch).update(
                email=ANONYMISED_EMAIL, mailbox=ANONYMISED_EMAIL, phone="", name=""
            )
            forget_personal_data(model=Order, ids=batch)
    return anonymised


# What an anonymised membership keeps instead of its holder's name.
ANONYMISED_NAME = "anonymised"


def anonymise_old_memberships(*, batch_size: int = 1000) -> int:
    """Replace the holder's name and email on memberships that ended more than the retention
    period ago (lapsed, or cancelled), or that were never paid (pending, bought that long ago,
    with no order held or confirmed: its hold ran out, or it was cancelled); how many. Their
    kept cards, which print the name, are deleted. Kept: the membership, its type, period,
    codes and sales. One renewed in time has not ended; a gift paid for and not redeemed has
    not either (it has no holder yet). Idempotent, a batch a statement."""
    cutoff = timezone.localdate() - timedelta(days=settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS)
    # A sale still to be paid, paid, or bought within the period: its membership is not done.
    live = MembershipSale.objects.filter(membership=OuterRef("pk")).filter(
        Q(order__status__in=[OrderStatus.HELD, OrderStatus.CONFIRMED])
        | Q(order__created_at__date__gte=cutoff)
    )
    never_paid = Q(status=MembershipStatus.PENDING, created_at__date__lt=cutoff) & ~Exists(live)
    ended = (
        Q(status__in=[MembershipStatus.ACTIVE, MembershipStatus.EXPIRED], valid_until__lt=cutoff)
        | Q(status=MembershipStatus.CANCELLED, cancelled_at__date__lt=cutoff)
        | never_paid
    )
    due = (
        Membership.objects.filter(ended)
        .filter(~Q(email__in=["", ANONYMISED_EMAIL]) | ~Q(holder_name__in=["", ANONYMISED_NAME]))
        .order_by()
        .values_list("pk", flat=True)
    )
    anonymised = 0
    while batch := list(due[:batch_size]):
        with transaction.atomic():
            anonymised += Membership.objects.filter(pk__in=batch).update(
                email=ANONYMISED_EMAIL, holder_name=ANONYMISED_NAME
            )
            MembershipCard.objects.filter(membership_id__in=batch).delete()
            forget_personal_data(model=Membership, ids=batch)
    # The cards of memberships anonymised before their cards were deleted with them.
    MembershipCard.objects.filter(membership__holder_name=ANONYMISED_NAME).delete()
    return anonymised
