"""A group order's money after approval: payments staff record (a bank transfer, cash or the
card terminal at the desk), through the sale's own payments (orders.services.payments, whose
pays_later lets a confirmed order by invoice take them), and the reminders of what is due."""

from datetime import timedelta
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from groups.exceptions import GroupRequestAnswered, UnknownGroupRequest
from groups.models import GroupRequest, GroupStatus
from groups.tasks import mail_group
from museum.exceptions import InvalidInput
from museum.money import ZERO
from orders.models import Payment
from orders.providers import DESK
from orders.services.payments import start_payment

# How staff say they were paid (the desk's payment's `info`).
METHODS = ("bank_transfer", "cash", "card")


def record_payment(*, request_id, by, amount: Decimal, method: str = "bank_transfer") -> Payment:
    """Staff record what the group paid (`amount`, up to what is due), as the desk's payment."""
    if method not in METHODS:
        raise InvalidInput("method", ", ".join(METHODS))
    group = GroupRequest.objects.filter(pk=request_id).first()
    if group is None:
        raise UnknownGroupRequest()
    if group.status != GroupStatus.APPROVED or group.order_id is None:
        raise GroupRequestAnswered(status=group.status)
    return start_payment(
        order_id=group.order_id, by=by, provider_name=DESK, method=method, amount=amount
    )


def remind_groups(*, today=None) -> int:
    """Mail each approved group whose deposit or balance falls due within 3 days and is not paid
    yet, once per term; how many reminders."""
    today = today or timezone.localdate()
    soon = today + timedelta(days=3)
    sent = 0
    for field, at, kind in (
        ("deposit_due", "deposit_reminded_at", "deposit_reminder"),
        ("balance_due", "balance_reminded_at", "balance_reminder"),
    ):
        due = GroupRequest.objects.filter(
            status=GroupStatus.APPROVED,
            no_show=False,
            **{f"{field}__lte": soon, f"{at}__isnull": True},
        ).select_related("order")
        for group in due:
            order = group.order
            assert order is not None  # approved
            paid = order.paid - order.paid_back
            owed = (group.deposit or ZERO) - paid if kind == "deposit_reminder" else order.due
            if owed <= 0:
                continue
            with transaction.atomic():
                # Claimed once: another run may have sent it.
                if GroupRequest.objects.filter(pk=group.pk, **{f"{at}__isnull": True}).update(
                    **{at: timezone.now()}
                ):
                    mail_group(group, kind)
                    sent += 1
    return sent
