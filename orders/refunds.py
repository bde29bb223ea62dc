"""Paying refunds back: through the provider that took the money, by the task worker after the
cancellation commits (a provider's answer never holds a cancellation's locks, and a provider
that is down fails the refund, not the cancellation).

Each refund is its own task; one still `created` long after (its task lost with a worker) is
enqueued again by the periodic `pay_back_lost_refunds`. The provider is asked with the refund's
own idempotency key, so a refund asked twice is paid once.
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django_tasks import task

from museum.periodic import schedule_periodic_tasks
from orders.models import Refund, RefundState
from orders.providers import provider
from orders.providers.base import ProviderError

# Far longer than a refund's call to its provider can take.
LOST_AFTER = timedelta(minutes=10)


def pay_back_later(*, refund: Refund) -> None:
    """Enqueue paying the refund back, in the caller's transaction."""
    pay_back_refund.enqueue(refund_id=refund.pk)


@task()
def pay_back_refund(*, refund_id: int) -> str:
    refund = pay_back(refund_id=refund_id)
    return refund.state if refund else "no such refund"


def pay_back(*, refund_id: int) -> Refund | None:
    """Pay the refund back through its payment's provider; a failure stays on the refund, with
    the provider's message, for staff to see and try again."""
    refund = Refund.objects.select_related("payment").filter(pk=refund_id).first()
    if refund is None or refund.state != RefundState.CREATED or refund.payment is None:
        return refund
    try:
        state, reference = provider(refund.payment.provider).refund(refund)
    except ProviderError as exc:
        state, reference, error = RefundState.FAILED, "", str(exc)[:500]
    else:
        error = ""
    done_at = timezone.now() if state == RefundState.DONE else None
    # Only a refund still being paid back changes: a second worker's attempt finds it done.
    Refund.objects.filter(pk=refund_id, state=RefundState.CREATED).update(
        state=state, reference=reference, error=error, done_at=done_at
    )
    refund.refresh_from_db()
    return refund


@task()
def pay_back_lost_refunds() -> int:
    """Enqueue again the refunds whose task was lost with its worker; how many."""
    schedule_periodic_tasks()
    lost = Refund.objects.filter(
        state=RefundState.CREATED,
        payment__isnull=False,
        created_at__lte=timezone.now() - LOST_AFTER,
    ).values_list("pk", flat=True)
    with transaction.atomic():
        ids = list(lost[:1000])
        for refund_id in ids:
            pay_back_refund.enqueue(refund_id=refund_id)
    return len(ids)
