"""Money before places: an online order is held until a provider confirms its payment; a sales
partner's is paid on account; cancelling a paid order pays back through the provider that took
the money, never more than was paid.

A provider's word moves an order here, under the order's row lock and then the places' (the
lock order of a sale): a notification handled twice, or two payments of one order, confirm it
once. Calls to a provider are made outside any transaction, so no row stays locked while the
provider answers.
"""

import logging
import uuid
from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import AuditEntry, record
from museum import metrics
from museum.exceptions import InvalidInput, NotFound
from orders.exceptions import (
    HoldExpired,
    NothingToPay,
    PaymentRequired,
    ProviderFailed,
    ProviderUnavailable,
    SoldOut,
    TooManyPaymentAttempts,
)
from orders.models import (
    Channel,
    Order,
    OrderStatus,
    Payment,
    PaymentState,
    ProviderEvent,
    Refund,
    RefundSource,
    RefundState,
    Ticket,
)
from orders.providers import (
    DESK,
    ON_ACCOUNT,
    SELL_ON_ACCOUNT,
    TAKE_DESK_PAYMENT,
    ProviderError,
    offered,
    provider,
)
from orders.refunds import pay_back_later
from orders.selectors import order_to_change, tickets_of, viewable_order
from orders.services import places
from orders.tasks import mail_confirmation, mail_not_placed

logger = logging.getLogger(__name__)

# Each start asks the provider for a new payment: enough for a few cards declined.
MAX_PAYMENT_ATTEMPTS = 10


def channel_of(account) -> str:
    """How an account's orders are paid: on account for sales partners, else online."""
    return Channel.ON_ACCOUNT if account.has_perm(SELL_ON_ACCOUNT) else Channel.ONLINE


def needs_payment(order: Order) -> bool:
    """Whether confirming the order waits for a provider: an online order with a price."""
    return order.channel == Channel.ONLINE and order.total > 0


def mark_confirmed(order: Order, *, now) -> None:
    """The order becomes confirmed (paid, on account, or free) and its email is enqueued, within
    the address's daily limit; the caller saves it."""
    order.status, order.hold_expires_at, order.confirmed_at = OrderStatus.CONFIRMED, None, now
    if _may_mail(order, now=now):
        mail_confirmation(order=order)


def confirm_held(order: Order, *, now) -> None:
    """A held order, locked, is confirmed: its tickets valid, a partner's paid on account."""
    mark_confirmed(order, now=now)
    order.save(update_fields=["status", "hold_expires_at", "confirmed_at", "confirmation_task_id"])
    Ticket.objects.filter(order=order).update(held=False)
    record_on_account_payment(order)
    record(action=Action.CONFIRMED, obj=order, changes={"status": [OrderStatus.HELD, order.status]})
    # Sold now: the tickets are read once, with what the order's answer shows of them, and
    # counted from there (a sale unheld counts the tickets it made, without a query).
    order.sold_tickets = list(tickets_of(order))
    metrics.count_tickets(metrics.TICKETS_SOLD, order.sold_tickets)


def record_on_account_payment(order: Order) -> None:
    """A sales partner's confirmed order is paid on account: the monthly invoice lists it."""
    confirmed = order.status == OrderStatus.CONFIRMED
    if confirmed and order.channel == Channel.ON_ACCOUNT and order.total > 0:
        Payment.objects.create(
            order=order,
            provider=ON_ACCOUNT,
            amount=order.total,
            currency=settings.MUSEUM_CURRENCY,
            state=PaymentState.CONFIRMED,
            confirmed_at=order.confirmed_at,
            taken_by_id=order.buyer_id,
        )


def refuse_unpaid_confirmation(order: Order) -> None:
    """A bare confirmation of an online order with a price is refused: a provider confirms it."""
    if needs_payment(order):
        raise PaymentRequired()


def _may_mail(order: Order, *, now) -> bool:
    """Partners' orders are always mailed; online orders up to the address's daily limit, so
    that free orders cannot flood someone's mailbox."""
    if not order.email:  # sold at the desk to someone who wanted no email
        return False
    if order.channel != Channel.ONLINE:
        return True
    sent = (
        Order.objects.filter(
            email__iexact=order.email,
            channel=Channel.ONLINE,
            confirmed_at__gte=now - timedelta(days=1),
        )
        .exclude(pk=order.pk)
        .count()
    )
    if sent >= settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY:
        logger.warning("Order %s confirmed without its email: the address's daily limit", order.pk)
        return False
    return True


def start_payment(
    *,
    order_id: uuid.UUID,
    by,
    provider_name: str,
    method: str = "",
    tendered: Decimal | None = None,
) -> Payment:
    """Start paying a held order with `provider_name`: the hold is extended for the payment to
    complete. The desk's payment is taken at once and confirms the order."""
    chosen = offered(by)
    if provider_name not in chosen:
        raise ProviderUnavailable(provider_name, chosen)
    with transaction.atomic():
        # Staff at the desk take anyone's payment; others pay their own orders.
        order = _order_to_pay(order_id=order_id, by=by, desk=provider_name == DESK)
        if order.payments.count() >= MAX_PAYMENT_ATTEMPTS:
            raise TooManyPaymentAttempts(limit=MAX_PAYMENT_ATTEMPTS)
        if tendered is not None and tendered < order.total:
            raise InvalidInput(
                "tendered", _("Less than the order's total, %(total)s.") % {"total": order.total}
            )
        now = timezone.now()
        order.hold_expires_at = max(
            order.hold_expires_at or now,
            now + timedelta(minutes=settings.MUSEUM_PAYMENT_HOLD_MINUTES),
        )
        order.save(update_fields=["hold_expires_at"])
        payment = Payment.objects.create(
            order=order,
            provider=provider_name,
            amount=order.total,
            currency=settings.MUSEUM_CURRENCY,
            info=method,
            tendered=tendered,
            taken_by=by,
        )
    try:
        started = provider(provider_name).start(payment)
    except ProviderError as exc:
        Payment.objects.filter(pk=payment.pk).update(state=PaymentState.FAILED, info=str(exc)[:200])
        raise ProviderFailed() from exc
    payment.reference, payment.state = started.reference, PaymentState.PENDING
    payment.save(update_fields=["reference", "state"])
    if started.paid:
        payment = payment_succeeded(payment_id=payment.pk)
    payment.client_secret, payment.pay_url = started.client_secret, started.pay_url
    return payment


def _order_to_pay(*, order_id: uuid.UUID, by, desk: bool) -> Order:
    if desk and by.has_perm(TAKE_DESK_PAYMENT):
        order = Order.objects.select_for_update().filter(pk=order_id).first()
        if order is None:
            raise NotFound()
    else:
        order = order_to_change(order_id=order_id, by=by)
    if order.status == OrderStatus.HELD and order.total > 0:
        if order.hold_expires_at and order.hold_expires_at <= timezone.now():
            raise HoldExpired()
        return order
    if order.status == OrderStatus.EXPIRED:
        raise HoldExpired()
    raise NothingToPay()


def payments_of(*, order_id: uuid.UUID, viewer) -> list[Payment]:
    order = viewable_order(order_id=order_id, viewer=viewer)
    return list(order.payments.order_by("created_at"))


def payment_succeeded(*, payment_id: uuid.UUID, event: tuple[str, str] | None = None) -> Payment:
    """The provider took the payment: the order is confirmed, once, whichever notification comes
    first. After its hold ran out it takes its places again if they are free; else, or if the
    order is cancelled or already paid, the money goes back at once."""
    with transaction.atomic():
        if event is not None and not _first_notification(*event):
            return Payment.objects.get(pk=payment_id)
        order_id = Payment.objects.values_list("order_id", flat=True).get(pk=payment_id)
        # The order first, as every change of an order locks it.
        order = (
            Order.objects.select_for_update(of=("self",)).select_related("slot").get(pk=order_id)
        )
        payment = Payment.objects.select_for_update().get(pk=payment_id)
        if payment.state in (PaymentState.CONFIRMED, PaymentState.REFUNDED):
            return payment
        now = timezone.now()
        placed = order.status == OrderStatus.HELD or (
            order.status == OrderStatus.EXPIRED and _placed_again(order)
        )
        if placed:
            record(action=Action.PAID, obj=order, changes=_audited_payment(payment))
            confirm_held(order, now=now)
            # Tickets cancelled while the order was held were not paid for.
            if payment.amount > order.total:
                _refund(payment, order=order, amount=payment.amount - order.total)
            payment.state = PaymentState.CONFIRMED
        else:  # its places are gone, or it is cancelled, or another payment paid it
            _refund(payment, order=order, amount=payment.amount, source=RefundSource.NOT_PLACED)
            mail_not_placed(payment=payment)
            payment.state = PaymentState.REFUNDED
        # The payment's new state is written last, after all it caused.
        payment.confirmed_at = now
        payment.save(update_fields=["state", "confirmed_at"])
        metrics.count_payment(provider=payment.provider, state=payment.state)
    return payment


def _audited_payment(payment: Payment) -> dict:
    return {"payment": payment.pk, "provider": payment.provider, "amount": payment.amount}


def payment_failed(
    *, payment_id: uuid.UUID, message: str, event: tuple[str, str] | None = None
) -> None:
    """The provider declined the payment: the order stays held until its hold runs out, for the
    buyer to try again."""
    with transaction.atomic():
        if event is not None and not _first_notification(*event):
            return
        failed = Payment.objects.filter(
            pk=payment_id, state__in=[PaymentState.CREATED, PaymentState.PENDING]
        )
        for provider_name in failed.values_list("provider", flat=True):
            metrics.count_payment(provider=provider_name, state=PaymentState.FAILED)
        failed.update(state=PaymentState.FAILED, info=message[:200])


def _first_notification(provider_name: str, event_id: str) -> bool:
    """Whether this notification is new: its row is written once, in the transaction of what it
    does, so a repeat (even a concurrent one) does nothing."""
    try:
        with transaction.atomic():
            ProviderEvent.objects.create(provider=provider_name, event_id=event_id)
    except IntegrityError:
        return False
    return True


def _placed_again(order: Order) -> bool:
    """An expired order whose payment came late takes its places again, if still free; its
    tickets voided by the expiry are valid again."""
    expired = Ticket.objects.filter(order=order, cancelled_by__isnull=True)
    tickets = list(expired.exclude(cancelled_at__isnull=True).values_list("pk", flat=True))
    try:
        with transaction.atomic():
            places.take(
                ticket_date=order.date, event_id=order.event_id, slot=order.slot, n=len(tickets)
            )
    except SoldOut:
        return False
    Ticket.objects.filter(pk__in=tickets).update(cancelled_at=None)
    order.status, order.cancelled_at = OrderStatus.HELD, None
    order.save(update_fields=["status", "cancelled_at"])
    return True


def _refund(
    payment: Payment, *, order: Order, amount: Decimal, source: str = RefundSource.BUYER
) -> Refund:
    refund = Refund.objects.create(order=order, payment=payment, amount=amount, source=source)
    pay_back_later(refund=refund)
    return refund


def refund_tickets(
    *, order: Order, tickets: Sequence[Ticket], source: str, by=None
) -> tuple[list[Refund], AuditEntry]:
    """What was paid for `tickets` of a confirmed order goes back through the provider that
    took it, a refund per ticket, never more than the payment left; without a payment (a free
    order, or one sold before payments), staff pay back by hand. A provider that pays back
    without calling out (on account, the desk) settles it here; the others after the commit.

    The refunds, and their audit entry, which the caller records with its own change's (one
    INSERT for both: audit.services.record_each)."""
    # The payment with what it paid back already, in one statement.
    payment = (
        order.payments.filter(state=PaymentState.CONFIRMED)
        .annotate(paid_back=Sum("refunds__amount", default=Decimal("0")))
        .order_by("-created_at")  # the model's own order, which a grouped query leaves out
        .first()
    )
    left = payment.amount - payment.paid_back if payment else Decimal("0")
    local = payment is not None and provider(payment.provider).settles_locally
    now = timezone.now()
    refunds = []
    for ticket in tickets:
        amount = min(ticket.price, left) if payment else ticket.price
        left -= amount
        refund = Refund(
            order=order,
            ticket=ticket,
            payment=payment,
            amount=amount,
            source=source,
            cancelled_by=by,
            state=RefundState.CREATED if payment and amount else _without_provider(amount),
        )
        if local and refund.state == RefundState.CREATED:
            assert payment is not None
            refund.state, refund.reference = provider(payment.provider).refund(refund)
            refund.done_at = now if refund.state == RefundState.DONE else None
        refunds.append(refund)
    refunds = Refund.objects.bulk_create(refunds)
    metrics.count_tickets(metrics.TICKETS_REFUNDED, tickets)
    for ticket, refund in zip(tickets, refunds, strict=True):
        ticket.refund = refund  # the answer shows it
        if refund.state == RefundState.CREATED:
            pay_back_later(refund=refund)
    changes = {
        "tickets": [ticket.pk for ticket in tickets],
        "amount": sum((refund.amount for refund in refunds), Decimal("0")),
        "source": source,
        # Who pays it back ("" without a payment: staff, by hand), for the history's words.
        "provider": payment.provider if payment else "",
    }
    return refunds, (Action.REFUNDED, order, changes)


def _without_provider(amount: Decimal) -> str:
    return RefundState.MANUAL if amount else RefundState.DONE


def retry_refund(*, refund_id: int) -> None:
    """A failed refund is tried again (staff, from the admin)."""
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        if refund.state == RefundState.FAILED:
            refund.state, refund.error = RefundState.CREATED, ""
            refund.save(update_fields=["state", "error"])
            pay_back_later(refund=refund)
