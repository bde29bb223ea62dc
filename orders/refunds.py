"""Paying refunds back, one way: `settle` asks the refund's payment's provider and puts the
answer on the refund, whoever calls it.

A provider that calls nobody (the desk, a partner's account, the demo) is settled in the
cancellation's own transaction, as its refunds are written (`record_refunds`). One that calls out
(Stripe) is settled by a task after the cancellation commits, so a provider's answer never holds
a cancellation's locks, and a provider that is down fails the refund, not the cancellation: the
task claims the refund with one conditional UPDATE (still being paid back, the previous
attempt's number: it writes its own and the time), commits, calls the provider outside any
transaction, then writes the outcome. A failure stays on the refund, with the provider's message,
for staff to see and try again. An attempt lost with its worker leaves its claim, which the
periodic `pay_back_lost_refunds` takes back (museum.lost_work). The provider is asked with the
refund's own idempotency key, so a refund asked twice is paid once.
"""

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from django.db.models import F, QuerySet
from django.utils import timezone
from django_tasks import task

from museum.lost_work import requeue_lost
from museum.periodic import schedule_periodic_tasks
from orders.models import Order, Refund, RefundState
from orders.providers import provider
from orders.providers.base import Provider, ProviderError
from orders.services.receipts import issue_credit_note


def settle(refund: Refund, *, through: Provider) -> None:
    """Pay the refund back through `through`, its payment's provider: the answer (state, the
    provider's reference or its error, when it was done) on the refund, for the caller to
    write."""
    try:
        refund.state, refund.reference = through.refund(refund)
        refund.error = ""
    except ProviderError as exc:
        refund.state, refund.reference, refund.error = RefundState.FAILED, "", str(exc)[:500]
    refund.done_at = timezone.now() if refund.state == RefundState.DONE else None


def record_refunds(refunds: Sequence[Refund], *, through: Provider | None) -> list[Refund]:
    """Write the refunds of one payment (its provider, `through`, looked up once), in the
    caller's transaction: settled now by a provider that calls nobody; else their task enqueued,
    to run after the commit."""
    for refund in refunds:
        settle_if_local(refund, through=through)
    written = Refund.objects.bulk_create(refunds)
    _add_paid_back(written)
    for refund in written:
        pay_back_later(refund=refund)
        # An order read with what its refunds come to (orders.selectors.order_to_change) keeps
        # it true for its answer.
        if hasattr(refund.order, "refunded"):
            refund.order.refunded += refund.amount
    # What they pay back of lines sold with a receipt or invoice: a credit note, in the same
    # transaction, so the document and the refunds it credits commit together.
    for order_id in dict.fromkeys(refund.order_id for refund in written):
        ours = [refund for refund in written if refund.order_id == order_id]
        issue_credit_note(ours[0].order, ours)
    return written


def _add_paid_back(refunds: Sequence[Refund]) -> None:
    """What the refunds give back, added to their orders' `paid_back` (the order is locked by
    the change that makes them), on the rows and on the orders in hand."""
    for order_id in {refund.order_id for refund in refunds}:
        amount = sum((r.amount for r in refunds if r.order_id == order_id), Decimal("0"))
        if amount:
            Order.objects.filter(pk=order_id).update(paid_back=F("paid_back") + amount)
    for refund in refunds:
        refund.order.paid_back += refund.amount


def settle_if_local(refund: Refund, *, through: Provider | None) -> None:
    """A refund still being paid back through a provider that calls nobody is settled now, in
    the caller's transaction."""
    if through is not None and through.settles_locally and refund.state == RefundState.CREATED:
        settle(refund, through=through)


def pay_back_later(*, refund: Refund) -> None:
    """Enqueue paying the refund back (its first attempt), in the caller's transaction, if it is
    still being paid back (not settled already, nor owed by hand)."""
    if refund.state == RefundState.CREATED:
        pay_back_refund.enqueue(refund_id=refund.pk)


@task()
def pay_back_refund(*, refund_id: int, attempt: int = 1) -> str:
    refund = pay_back(refund_id=refund_id, attempt=attempt)
    return refund.state if refund else "no such refund"


def being_paid_back() -> QuerySet[Refund]:
    return Refund.objects.filter(state=RefundState.CREATED, payment__isnull=False)


def claim_refund(*, refund_id: int, attempt: int) -> bool:
    """Claim the refund for attempt number `attempt`, committed at once; False if it is not this
    attempt's to make (paid back, failed, or another attempt has it)."""
    claimed = being_paid_back().filter(pk=refund_id, attempt=attempt - 1)
    return bool(claimed.update(attempt=attempt, claimed_at=timezone.now()))


def pay_back(*, refund_id: int, attempt: int = 1) -> Refund | None:
    """Attempt number `attempt` at paying the refund back, if it is this attempt's to make."""
    if not claim_refund(refund_id=refund_id, attempt=attempt):
        return Refund.objects.filter(pk=refund_id).first()
    refund = Refund.objects.select_related("payment").get(pk=refund_id)
    assert refund.payment is not None
    settle(refund, through=provider(refund.payment.provider))
    # Written while it is still being paid back, even if its claim was taken back meanwhile:
    # the provider answered. A second attempt's answer, written first, stays.
    Refund.objects.filter(pk=refund_id, state=RefundState.CREATED).update(
        state=refund.state,
        reference=refund.reference,
        error=refund.error,
        done_at=refund.done_at,
        claimed_at=None,
    )
    refund.refresh_from_db()
    return refund


@task()
def pay_back_lost_refunds() -> int:
    """Enqueue again the refunds whose attempt was lost with its worker; how many."""
    schedule_periodic_tasks()
    return requeue_lost(
        being_paid_back().filter(claimed_at__isnull=False),
        attempt_field="attempt",
        claimed_at_field="claimed_at",
        enqueue=_enqueue_again,
        give_up=_give_up,
    )


def _enqueue_again(refund: Refund, attempt: int, run_after: datetime) -> None:
    pay_back_refund.using(run_after=run_after).enqueue(refund_id=refund.pk, attempt=attempt)


def _give_up(refund: Refund) -> None:
    Refund.objects.filter(pk=refund.pk).update(
        state=RefundState.FAILED, error="Every attempt was lost with its worker."
    )
