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
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import AuditEntry, record
from museum import metrics
from museum.exceptions import InvalidInput, MuseumProblem, NotFound
from museum.money import ZERO
from orders.exceptions import (
    HoldExpired,
    MembershipNotRenewable,
    MembershipNotValid,
    NothingToPay,
    NotTakenAsAsked,
    PaymentInProgress,
    PaymentRequired,
    ProviderFailed,
    ProviderUnavailable,
    SoldOut,
    TooManyPaymentAttempts,
)
from orders.models import (
    BuyerEmail,
    Channel,
    Donation,
    Membership,
    MembershipSale,
    MembershipStatus,
    Order,
    OrderStatus,
    Payment,
    PaymentState,
    ProviderEvent,
    Refund,
    RefundSource,
    RefundState,
    Ticket,
    TicketImage,
)
from orders.providers import (
    DESK,
    ON_ACCOUNT,
    SELL_ON_ACCOUNT,
    TAKE_DESK_PAYMENT,
    offered,
    provider,
)
from orders.providers.base import Notification, ProviderError, Received
from orders.refunds import pay_back_later, record_refunds, settle_if_local
from orders.selectors import order_to_change, tickets_of, viewable_order
from orders.services import places, vouchers
from orders.services.limits import mailbox_full
from orders.services.membership_periods import refuse_unless_valid, start_periods
from orders.services.receipts import issue_receipt
from orders.signals import order_confirmed, refunds_to_gift_card
from orders.tasks import EMAIL_FIELDS, mail_confirmation, mail_not_placed

logger = logging.getLogger(__name__)

# Each start after a failed one asks the provider for a new payment: enough for a few cards
# declined.
MAX_PAYMENT_ATTEMPTS = 10
# A payment in progress: one per order (a database constraint). A failed one may still take money
# at its provider (a Stripe intent is paid with another card): a new start cancels it first.
IN_PROGRESS = (PaymentState.CREATED, PaymentState.PENDING)
OPEN = (*IN_PROGRESS, PaymentState.FAILED)


def channel_of(account) -> str:
    """How an account's orders are paid: on account for sales partners, else online."""
    return Channel.ON_ACCOUNT if account.has_perm(SELL_ON_ACCOUNT) else Channel.ONLINE


def needs_payment(order: Order) -> bool:
    """Whether confirming the order waits for a provider: an online order with a price."""
    return order.channel == Channel.ONLINE and order.total > 0


def pays_later(order: Order) -> bool:
    """Whether the order is confirmed and still owes part of its total, by invoice (a group's):
    its payments come after its tickets, by card link or recorded at the desk."""
    return (
        order.channel == Channel.INVOICE
        and order.status == OrderStatus.CONFIRMED
        and not order.paid_in_full()
    )


def mark_confirmed(order: Order, *, now, new: bool = False) -> None:
    """The order becomes confirmed (paid, on account, or free) and is saved (inserted if `new`);
    its email is enqueued within its mailbox's daily limit."""
    order.status, order.hold_expires_at, order.confirmed_at = OrderStatus.CONFIRMED, None, now
    if order.channel == Channel.ON_ACCOUNT:
        # Paid on account as it is confirmed (record_on_account_payment writes the payment).
        order.paid = order.total
    mailed = _may_mail(order, now=now)
    if mailed:
        mail_confirmation(order=order)
    if new:
        order.save(force_insert=True)
    else:
        order.save(
            update_fields=["status", "hold_expires_at", "confirmed_at", "paid", *EMAIL_FIELDS]
        )
    if mailed:
        count_email(order, kind=BuyerEmail.Kind.CONFIRMATION)
    if order.sells_memberships:
        # Paid, on account or free, at once or later: the periods it sold start now.
        start_periods(order, now=now)
    order_confirmed.send(sender=Order, order=order)


def confirm_held(order: Order, *, now) -> None:
    """A held order, locked, is confirmed: its tickets valid, a partner's paid on account."""
    mark_confirmed(order, now=now)
    Ticket.objects.filter(order=order).update(held=False)
    record_on_account_payment(order)
    record(action=Action.CONFIRMED, obj=order, changes={"status": [OrderStatus.HELD, order.status]})
    # Sold now: the tickets are read once, with what the order's answer shows of them, and
    # counted from there (a sale unheld counts the tickets it made, without a query).
    order.sold_tickets = list(tickets_of(order))
    metrics.count_tickets(metrics.TICKETS_SOLD, order.sold_tickets)
    vouchers.record_redeemed(order.sold_tickets)
    issue_receipt(order)  # last: its number's lock is held to the commit


def membership_refusal(order: Order) -> MuseumProblem | None:
    """Why the locked, held order may no longer be confirmed for its membership's sake, asked
    again at every confirmation however it comes (a provider's payment, the desk, a partner's
    confirm): a member visit whose membership no longer admits on the visit's date
    (MembershipNotValid, with why), a membership's order whose membership was cancelled
    meanwhile (MembershipNotRenewable: a renewal never brings a cancelled one back). None if it
    may be confirmed."""
    if order.membership_id is not None:
        # Locked after the order, as every change of an order locks its memberships: a
        # cancellation of the membership under way is waited for, and seen.
        membership = Membership.objects.select_for_update().get(pk=order.membership_id)
        try:
            refuse_unless_valid(membership, order.date)
        except MembershipNotValid as refusal:
            return refusal
    elif order.sells_memberships:
        # A cancellation of the membership cancels its held orders under their locks
        # (cancel_membership_order); one whose hold ran out before is read here.
        sold = MembershipSale.objects.filter(order=order).values("membership_id")
        if Membership.objects.filter(pk__in=sold, status=MembershipStatus.CANCELLED).exists():
            return MembershipNotRenewable(_("The membership was cancelled."))
    return None


def void_hold(order: Order, *, now, status: str = OrderStatus.CANCELLED, changes=None) -> None:
    """The locked, held order will never be confirmed: it ends as `status` (EXPIRED for a hold
    that ran out), its tickets void and its places (members' too) given back, what its part
    payments took paid back (a gift card's part to the card), audited."""
    pay_back_parts(order)
    order.status = status
    order.cancelled_at = now
    order.save(update_fields=["status", "cancelled_at"])
    expired = status == OrderStatus.EXPIRED
    record(action=Action.EXPIRED if expired else Action.CANCELLED, obj=order, changes=changes or {})
    metrics.count_orders(
        metrics.ORDERS_EXPIRED if expired else metrics.ORDERS_CANCELLED, by_channel=not expired
    )
    valid = Ticket.objects.filter(order=order, cancelled_at__isnull=True)
    # A member visit's free places go back to the members' count too.
    member = valid.filter(member=True).count() if order.membership_id else 0
    # Its vouchers' uses and discount go back too (read first: few orders have any).
    discounted = list(valid.filter(voucher__isnull=False).values_list("voucher_id", "discount"))
    voided = valid.update(cancelled_at=now)
    # As a cancellation does: an image drawn while held is drawn again, stamped CANCELLED.
    TicketImage.objects.filter(ticket__order=order).only("pk").delete()
    vouchers.give_back(discounted, keeping=True)
    places.give_back(order=order, n=voided, member=member)
    vouchers.give_back(discounted, keeping=False)


def pay_back_parts(order: Order) -> list[Refund]:
    """What the locked, held order's confirmed part payments took and did not give back yet,
    paid back through each (a hold that ends unpaid, or one whose lines change: its buyer pays
    again, once, for what it holds then). Nothing for an order no part payment paid."""
    if order.paid == order.paid_back:
        return []
    refunds = []
    for payment in _confirmed_newest_first(order):
        left = payment.amount - payment.given_back
        if left > 0:
            refunds.append(
                _refund(payment, order=order, amount=left, source=RefundSource.UNPAID_HOLD)
            )
    amount = sum((refund.amount for refund in refunds), Decimal("0"))
    record(
        action=Action.REFUNDED,
        obj=order,
        changes={"amount": amount, "source": RefundSource.UNPAID_HOLD},
    )
    return refunds


def _confirmed_newest_first(order: Order) -> list[Payment]:
    """The order's confirmed payments, newest first (refunds go back in that order), each with
    what its refunds gave back already (`given_back`), in one statement."""
    return list(
        order.payments.filter(state=PaymentState.CONFIRMED)
        .annotate(given_back=Sum("refunds__amount", default=Decimal("0")))  # type: ignore[no-redef]
        .order_by("-confirmed_at", "-created_at")
    )


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
    """Whether the buyer may get one more email now: an online order's buyer gets none past their
    mailbox's daily limit, which every email counts toward (`count_email`), so that free orders
    or late payments cannot flood someone's mailbox. A partner's buyers get theirs, unless the
    order was placed to mail its buyer nothing (`mail_buyer`: a reseller tells its own)."""
    if not order.email or not order.mail_buyer:  # no email wanted, or the reseller's to send
        return False
    if order.channel != Channel.ONLINE:
        return True
    if mailbox_full(order.mailbox, now=now):
        logger.warning("Order %s: no email to its buyer, the mailbox's daily limit", order.pk)
        return False
    return True


def buyer_emails_sent(mailbox: str, since: datetime) -> int:
    """The emails the sale sent the mailbox's orders since then (limits.mailbox_full)."""
    return BuyerEmail.objects.filter(order__mailbox=mailbox, sent_at__gt=since).count()


def count_email(order: Order, *, kind: str) -> None:
    """An email sent to an online order's buyer counts toward their mailbox's daily limit. A
    partner's buyers are never refused theirs: no need to count them."""
    if order.channel == Channel.ONLINE:
        BuyerEmail.objects.create(order=order, kind=kind)


def mail_change(order: Order, *, now, saving: Sequence[str] = ()) -> None:
    """After a change of an order its visitor was confirmed (moved, tickets cancelled, money
    going back): its email again, in the change's transaction, saying what it holds now; within
    its mailbox's daily limit, which it counts toward like any email (_may_mail). An attempt
    still waiting sends the order as it is when it runs: two changes in a row make one email,
    or two. `saving`: the order's fields the change set and has not saved, written in the same
    UPDATE as the email's."""
    if _may_mail(order, now=now):
        mail_confirmation(order=order)
        order.save(update_fields=[*saving, *EMAIL_FIELDS])
        count_email(order, kind=BuyerEmail.Kind.CHANGE)
    elif saving:
        order.save(update_fields=saving)


def start_payment(
    *,
    order_id: uuid.UUID,
    by,
    provider_name: str,
    method: str = "",
    tendered: Decimal | None = None,
    code: str = "",
    amount: Decimal | None = None,
) -> Payment:
    """Start paying a held online order, or what is left to pay of it, with `provider_name`
    (a gift card's `code`: what the card holds, up to what is due); or an order paid by invoice
    (pays_later), `amount` of what it owes (a deposit, a bank transfer staff record) or all.
    One payment is in progress at a time: a start with the provider of the payment in progress
    answers that payment again; with another, the open payments are cancelled at their provider
    first. The first start extends the hold, once, to MUSEUM_PAYMENT_HOLD_MINUTES after it. The
    desk's payment is taken at once and confirms the order."""
    chosen = offered(by)
    if provider_name not in chosen:
        raise ProviderUnavailable(provider_name, chosen)
    for _pass in range(2):  # a second pass once the open payments are cancelled
        payment, to_cancel = _payment_to_start(
            order_id=order_id,
            by=by,
            provider_name=provider_name,
            method=method,
            tendered=tendered,
            code=code,
            amount=amount,
        )
        if payment is not None:
            return _started(payment)
        # No row stays locked while the providers answer.
        for payment in to_cancel:
            _cancel(payment)
    raise PaymentInProgress()


def _payment_to_start(
    *,
    order_id: uuid.UUID,
    by,
    provider_name: str,
    method: str,
    tendered: Decimal | None,
    code: str,
    amount: Decimal | None = None,
) -> tuple[Payment | None, list[Payment]]:
    """Under the order's lock: the payment to start (the one in progress with this provider, or
    a new one), or else the open payments to cancel first."""
    with transaction.atomic():
        # Staff at the desk take anyone's payment; others pay their own orders.
        order = _order_to_pay(order_id=order_id, by=by, desk=provider_name == DESK)
        open_payments = list(order.payments.filter(state__in=OPEN))
        for payment in open_payments:
            if payment.state in IN_PROGRESS and payment.provider == provider_name:
                return payment, []
        if open_payments:
            return None, open_payments
        new = _new_payment(
            order,
            by=by,
            provider_name=provider_name,
            method=method,
            tendered=tendered,
            code=code,
            amount=amount,
        )
        return new, []


def _new_payment(
    order: Order,
    *,
    by,
    provider_name: str,
    method: str,
    tendered: Decimal | None,
    code: str,
    amount: Decimal | None = None,
) -> Payment:
    """A new payment of the locked order; a held one's hold is extended to
    MUSEUM_PAYMENT_HOLD_MINUTES after the order's first payment started, never further."""
    if order.status == OrderStatus.HELD and order.payments.count() >= MAX_PAYMENT_ATTEMPTS:
        raise TooManyPaymentAttempts(limit=MAX_PAYMENT_ATTEMPTS)
    due = order.due
    if amount is not None and order.status == OrderStatus.CONFIRMED:
        if not ZERO < amount <= due:
            raise InvalidInput("amount", _("Between 0.01 and what is due, %(due)s.") % {"due": due})
        due = amount
    if tendered is not None and tendered < due:
        raise InvalidInput("tendered", _("Less than what is due, %(due)s.") % {"due": due})
    amount, reference = provider(provider_name).prepare(order=order, due=due, code=code)
    now = timezone.now()
    if order.status == OrderStatus.HELD:
        first = order.payments.order_by("created_at").values_list("created_at", flat=True).first()
        order.hold_expires_at = max(
            order.hold_expires_at or now,
            (first or now) + timedelta(minutes=settings.MUSEUM_PAYMENT_HOLD_MINUTES),
        )
        order.save(update_fields=["hold_expires_at"])
    return Payment.objects.create(
        order=order,
        provider=provider_name,
        amount=amount,
        reference=reference,
        currency=settings.MUSEUM_CURRENCY,
        info=method,
        tendered=tendered,
        taken_by=by,
    )


def _started(payment: Payment) -> Payment:
    """The payment started at its provider (or, started before, answered again), outside any
    transaction; the desk's is paid at once."""
    try:
        started = provider(payment.provider).start(payment)
    except (ProviderError, MuseumProblem) as exc:
        # One never started is over; one started may still be completed by its buyer.
        Payment.objects.filter(pk=payment.pk, state=PaymentState.CREATED).update(
            state=PaymentState.FAILED, info=str(exc)[:200]
        )
        if isinstance(exc, MuseumProblem):  # the provider's own refusal, as it said it
            raise
        raise ProviderFailed() from exc
    # Only a payment still in progress: a notification may have completed it meanwhile.
    Payment.objects.filter(pk=payment.pk, state__in=IN_PROGRESS).update(
        reference=started.reference, state=PaymentState.PENDING
    )
    payment.refresh_from_db()
    if started.paid:
        payment = payment_succeeded(payment_id=payment.pk)
    payment.client_secret, payment.pay_url = started.client_secret, started.pay_url
    return payment


def _cancel(payment: Payment) -> None:
    """An open payment cancelled at its provider, then here: it can take no money any more."""
    try:
        provider(payment.provider).cancel(payment)
    except ProviderError as exc:
        # Most often it was paid meanwhile: its notification confirms the order.
        raise ProviderFailed() from exc
    Payment.objects.filter(pk=payment.pk, state=payment.state).update(state=PaymentState.CANCELLED)


def _order_to_pay(*, order_id: uuid.UUID, by, desk: bool) -> Order:
    if desk and by.has_perm(TAKE_DESK_PAYMENT):
        order = Order.objects.select_for_update().filter(pk=order_id).first()
        if order is None:
            raise NotFound()
    else:
        order = order_to_change(order_id=order_id, by=by)
    if pays_later(order):
        return order
    # Only an online order takes a provider's payment: a partner's is paid on account.
    if order.status == OrderStatus.HELD and needs_payment(order):
        if order.hold_ran_out():
            raise HoldExpired()
        return order
    if order.status == OrderStatus.EXPIRED:
        raise HoldExpired()
    raise NothingToPay()


def payments_of(*, order_id: uuid.UUID, viewer) -> list[Payment]:
    """The order's payments, oldest first, each with the page that completes it while it can
    (its provider's pay_url: the demo's, while pending)."""
    order = viewable_order(order_id=order_id, viewer=viewer)
    payments = list(order.payments.order_by("created_at"))
    for payment in payments:
        payment.pay_url = provider(payment.provider).pay_url(payment)
    return payments


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
        # Only an online order not paid otherwise takes a provider's payment (a partner's is
        # paid on account); an expired one only if this payment pays it all.
        placed = pays_later(order) or (
            needs_payment(order)
            and not order.paid_in_full()
            and (
                order.status == OrderStatus.HELD
                or (
                    order.status == OrderStatus.EXPIRED
                    and payment.amount >= order.due
                    and _placed_again(order)
                )
            )
        )
        refusal = membership_refusal(order) if placed else None
        if refusal is not None:
            # Its membership no longer lets it be sold: the order ends, the money goes back.
            void_hold(order, now=now, changes={"refused": refusal.code})
            placed = False
        if placed:
            _take(payment, order=order, now=now)
            payment.state = PaymentState.CONFIRMED
        else:
            _pay_back_whole(payment, order=order, now=now)
            payment.state = PaymentState.REFUNDED
        # The payment's new state is written last, after all it caused.
        payment.confirmed_at = now
        payment.save(update_fields=["state", "confirmed_at"])
        metrics.count_payment(provider=payment.provider, state=payment.state)
    return payment


def _take(payment: Payment, *, order: Order, now) -> None:
    """The locked, held order takes the payment: confirmed once its payments cover its total,
    else it stays held for the rest. What it takes beyond what is due (tickets cancelled while
    the order was held, or a payment for the whole total after a part) goes back at once,
    before the order counts it paid, as the database holds (order_paid_within_total)."""
    due = order.due
    record(
        action=Action.PAID,
        obj=order,
        changes={**_audited_payment(payment), "due": max(due - payment.amount, Decimal("0"))},
    )
    if payment.amount > due:
        _refund(payment, order=order, amount=payment.amount - due)
    order.paid += payment.amount
    if order.paid_in_full() and order.status == OrderStatus.HELD:
        confirm_held(order, now=now)
    else:
        order.save(update_fields=["paid"])


def _audited_payment(payment: Payment) -> dict:
    return {"payment": payment.pk, "provider": payment.provider, "amount": payment.amount}


def _pay_back_whole(payment: Payment, *, order: Order, now) -> None:
    """A payment the order cannot take goes back whole at once, recorded with why, and the buyer
    is told why (an email that counts toward the mailbox's daily limit)."""
    if order.status == OrderStatus.CANCELLED:
        source = RefundSource.PAID_AFTER_CANCEL
    elif order.status == OrderStatus.EXPIRED:
        source = RefundSource.NOT_PLACED  # its places went meanwhile
    else:  # paid by another payment, or a partner's order, paid on account
        source = RefundSource.ALREADY_PAID
    _refund(payment, order=order, amount=payment.amount, source=source)
    record(
        action=Action.REFUNDED, obj=order, changes={**_audited_payment(payment), "source": source}
    )
    if _may_mail(order, now=now):
        mail_not_placed(payment=payment)
        count_email(order, kind=BuyerEmail.Kind.PAID_BACK)


def notification_received(*, provider_name: str, body: bytes, headers: Mapping[str, str]) -> None:
    """A provider's notification of a payment, acted on once per event: a failure marks the
    payment failed; a success confirms the order only once the provider itself, asked again,
    says it took this payment's amount, in its currency (NotTakenAsAsked otherwise,
    ProviderFailed while it cannot be asked: the provider notifies again later)."""
    chosen = provider(provider_name)
    notice = chosen.handle_notification(body=body, headers=headers)
    if notice is None:
        return
    payment = Payment.objects.filter(provider=provider_name, reference=notice.reference).first()
    if payment is None:
        # Not ours (another system on the same account), or a payment since deleted.
        return
    event = (provider_name, notice.event_id)
    if ProviderEvent.objects.filter(provider=provider_name, event_id=notice.event_id).exists():
        return  # handled before: not even read back again
    if not notice.succeeded:
        payment_failed(payment_id=payment.pk, message=notice.message, event=event)
        return
    try:
        received = chosen.read_back(payment)
    except ProviderError as exc:
        logger.warning("%s event %s: reading the payment back failed: %s", *event, exc)
        raise ProviderFailed() from exc
    if not _taken_as_asked(payment, received, notice):
        raise NotTakenAsAsked()
    payment_succeeded(payment_id=payment.pk, event=event)


def _taken_as_asked(payment: Payment, received: Received, notice: Notification) -> bool:
    """Whether what the provider took is this payment: its amount, currency and id; the
    provider's word that it succeeded is not enough."""
    asked = (payment.amount, payment.currency, str(payment.pk))
    taken = (received.amount, received.currency, received.payment_id)
    if received.succeeded and taken == asked:
        return True
    logger.warning(
        "%s event %s for payment %s: the provider reports %s (%s %s, payment %r), not as asked",
        payment.provider,
        notice.event_id,
        payment.pk,
        "succeeded" if received.succeeded else "not succeeded",
        received.amount,
        received.currency,
        received.payment_id,
    )
    return False


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
    rows = list(expired.exclude(cancelled_at__isnull=True).values_list("pk", "member"))
    tickets = [pk for pk, _member in rows]
    before = order.status, order.cancelled_at
    try:
        with transaction.atomic():
            # A membership's or a gift card's order has no places to take.
            if order.sells_visit:
                places.take(
                    ticket_date=order.date,
                    event_id=order.event_id,
                    slot=order.slot,
                    n=len(tickets),
                    member=sum(member for _pk, member in rows),
                )
            Ticket.objects.filter(pk__in=tickets).update(cancelled_at=None)
            order.status, order.cancelled_at = OrderStatus.HELD, None
            order.save(update_fields=["status", "cancelled_at"])
    except SoldOut:
        return False
    except IntegrityError:
        # A member visit whose membership booked another visit that day meanwhile
        # (one_member_visit_a_day): its places are gone as a sold-out one's are.
        order.status, order.cancelled_at = before
        return False
    return True


def _refund(
    payment: Payment, *, order: Order, amount: Decimal, source: str = RefundSource.BUYER
) -> Refund:
    refund = Refund(order=order, payment=payment, amount=amount, source=source)
    [refund] = record_refunds([refund], through=provider(payment.provider))
    return refund


def refund_tickets(
    *, order: Order, tickets: Sequence[Ticket], source: str, by=None, to_gift_card: bool = False
) -> tuple[list[Refund], AuditEntry]:
    """What was paid for `tickets` of a confirmed order goes back through the provider that
    took it, a refund per ticket, never more than the payment left; without a payment (a free
    order, or one sold before payments), staff pay back by hand (orders.refunds settles
    them).

    The refunds, and their audit entry, which the caller records with its own change's (one
    INSERT for both: audit.services.record_each)."""
    refunds, changes = _refund_lines(
        order=order, lines=tickets, source=source, by=by, to_gift_card=to_gift_card
    )
    metrics.count_tickets(metrics.TICKETS_REFUNDED, tickets)
    changes = {"tickets": [ticket.pk for ticket in tickets], **changes}
    return refunds, (Action.REFUNDED, order, changes)


def refund_membership_sales(
    *, order: Order, sales: Sequence[MembershipSale], source: str, by=None
) -> tuple[list[Refund], AuditEntry]:
    """As refund_tickets, for the membership periods an order sold: a refund per sale."""
    refunds, changes = _refund_lines(order=order, lines=sales, source=source, by=by)
    changes = {"membership_sales": [sale.pk for sale in sales], **changes}
    return refunds, (Action.REFUNDED, order, changes)


def refund_donations(
    *, order: Order, donations: Sequence[Donation], source: str, by=None
) -> tuple[list[Refund], AuditEntry]:
    """As refund_tickets, for donations staff give back (orders.services.donations): a refund
    per donation, through the payments that took it."""
    refunds, changes = _refund_lines(order=order, lines=donations, source=source, by=by)
    changes = {"donations": [donation.pk for donation in donations], **changes}
    return refunds, (Action.REFUNDED, order, changes)


def _refund_lines(
    *,
    order: Order,
    lines: Sequence[Ticket | MembershipSale | Donation],
    source: str,
    by,
    to_gift_card: bool = False,
) -> tuple[list[Refund], dict]:
    """Refunds of each line's price (a ticket or a membership sale) through the payments that
    paid for it, newest first (a card's part before the gift card's that paid first), never
    more than a payment has left; and what the audit record says of them. A line no payment has
    anything left for keeps one refund of what went back (0), so it shows as sold, then
    cancelled; without any payment (a free order, or one sold before payments), staff pay its
    price back by hand (orders.refunds settles them)."""
    payments = _confirmed_newest_first(order)
    refunds = [
        refund
        for line in lines
        for refund in _refunds_of_line(order, line, payments, source=source, by=by)
    ]
    if to_gift_card:
        # A gift card's part goes back onto its own card; the rest onto a new one.
        for refund in refunds:
            paid_by = refund.payment
            if refund.amount and paid_by and not provider(paid_by.provider).stored_value:
                refund.state = RefundState.GIFT_CARD
    written = []
    for paid_by in [*payments, None]:
        mine = [refund for refund in refunds if refund.payment is paid_by]
        if mine:
            through = provider(paid_by.provider) if paid_by else None
            written.extend(record_refunds(mine, through=through))
    onto_card = [refund for refund in written if refund.state == RefundState.GIFT_CARD]
    if onto_card:
        _issue_gift_card(order, onto_card, by=by)
    changes = {
        "amount": sum((refund.amount for refund in written), Decimal("0")),
        "source": source,
        # Who pays it back ("" without a payment: staff, by hand), for the history's words.
        "provider": ", ".join(dict.fromkeys(r.payment.provider for r in written if r.payment)),
    }
    return written, changes


def _refunds_of_line(
    order: Order,
    line: Ticket | MembershipSale | Donation,
    payments: list[Payment],
    *,
    source: str,
    by,
) -> list[Refund]:
    """The refunds of one line, through the payments newest first (what each gives back is
    added to its `given_back`), or by hand without any payment."""
    owed = line.price
    parts: list[Refund] = []
    for payment in payments:
        amount = min(owed, payment.amount - payment.given_back)
        if amount > 0 or (not parts and payment is payments[-1]):
            parts.append(_line_refund(order, payment, amount, source=source, by=by))
            payment.given_back += amount
            owed -= amount
        if owed == 0 and parts:
            break
    if not payments:
        parts.append(_line_refund(order, None, line.price, source=source, by=by))
    for refund in parts:
        # Set on the line too (the reverse side is the line's refunds).
        if isinstance(line, Ticket):
            refund.ticket = line
        elif isinstance(line, Donation):
            refund.donation = line
        else:
            refund.membership_sale = line
    return parts


def _issue_gift_card(order: Order, refunds: list[Refund], *, by) -> None:
    """The refunds go onto a new gift card, issued by the app that keeps gift cards."""
    answers = refunds_to_gift_card.send(sender=Order, order=order, refunds=refunds, by=by)
    if not any(card for _receiver, card in answers):
        raise RuntimeError("No gift card was issued for refunds onto a gift card")


def pay_back_instead(*, refunds: Sequence[Refund]) -> None:
    """Refunds paid onto a gift card, the card taken back (giftcards.services), paid back through
    their payments after all, as a refund that was never paid: now by a provider that calls
    nobody, else by a task after the commit."""
    for refund in refunds:
        assert refund.payment is not None and refund.state == RefundState.GIFT_CARD
        through = provider(refund.payment.provider)
        refund.state, refund.reference, refund.done_at = RefundState.CREATED, "", None
        settle_if_local(refund, through=through)
        refund.save(update_fields=["state", "reference", "error", "done_at"])
        pay_back_later(refund=refund)


def _line_refund(
    order: Order, payment: Payment | None, amount: Decimal, *, source: str, by
) -> Refund:
    return Refund(
        order=order,
        payment=payment,
        amount=amount,
        source=source,
        cancelled_by=by,
        state=RefundState.CREATED if payment and amount else _without_provider(amount),
    )


def refund_due(*, order: Order, tickets: Sequence[Ticket]) -> Decimal:
    """What cancelling `tickets` would pay back, as refund_tickets reckons it: their prices,
    never more than the payments have left; nothing for an order never confirmed (a hold)."""
    if order.status != OrderStatus.CONFIRMED:
        return Decimal("0")
    prices = sum((ticket.price for ticket in tickets), Decimal("0"))
    payments = _confirmed_newest_first(order)
    if not payments:
        return prices
    return min(prices, sum((p.amount - p.given_back for p in payments), Decimal("0")))


def _without_provider(amount: Decimal) -> str:
    return RefundState.MANUAL if amount else RefundState.DONE


def retry_refund(*, refund_id: int) -> None:
    """A failed refund is tried again (staff, from the admin)."""
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        if refund.state == RefundState.FAILED:
            # A new series of attempts.
            refund.state, refund.error, refund.attempt = RefundState.CREATED, "", 0
            refund.save(update_fields=["state", "error", "attempt"])
            pay_back_later(refund=refund)
