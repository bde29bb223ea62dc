"""Gift cards: sold as an order of the sale (OrderKind.GIFT_CARD, untaxed: a multi-purpose
voucher, whose tax is that of what it pays for), issued when that order is confirmed, spent as a
payment of another order (the `giftcard` provider), credited back by its refunds.

The balance is the sum of the card's ledger (Transaction). Every move off a card is written
under the card's row lock after its balance is read again inside the lock, so two payments racing
on one card never take more than it holds: the second finds less and is refused
(InsufficientBalance). A card is spendable from its order's confirmation to the end of the year
MUSEUM_GIFT_CARD_YEARS after it; an expired card's balance stays on the books (and in the
liability report) for staff to honour.
"""

import datetime as dt
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import record
from giftcards.codes import new_code, read_code
from giftcards.exceptions import (
    GiftCardExpired,
    GiftCardForGiftCard,
    GiftCardNotIssued,
    GiftCardSpent,
    InsufficientBalance,
    UnknownGiftCard,
)
from giftcards.models import GiftCard, GiftCardStatus, Transaction, TransactionKind
from museum import i18n
from museum.exceptions import InvalidInput
from museum.money import to_cent
from orders.exceptions import IsGiftCard
from orders.models import Order, OrderKind, Payment, Refund, RefundState
from orders.services.new_orders import new_order, record_new, settle_new, stays_held
from orders.services.payments import pay_back_instead as orders_pay_back_instead


def sell_gift_card(
    *, buyer, amount: Decimal, email: str, language: str = "", seller=None
) -> GiftCard:
    """A gift card of `amount` sold as an order of its own: held until paid online, or
    confirmed at once (a partner's, on account; the desk takes its payment next), when the card
    is issued. Its code is its buyer's once issued."""
    amount = to_cent(amount)
    low, high = settings.MUSEUM_GIFT_CARD_MIN, settings.MUSEUM_GIFT_CARD_MAX
    if not low <= amount <= high:
        raise InvalidInput(
            "amount", _("A gift card is sold for %(low)s to %(high)s.") % {"low": low, "high": high}
        )
    language = i18n.offered(language) or i18n.current()
    with transaction.atomic():
        # Its email is the card's (giftcards.notifications), sent by the sale's one pipeline
        # once the order is confirmed, within the mailbox's daily limit.
        order = new_order(
            buyer=buyer,
            email=email,
            language=language,
            kind=OrderKind.GIFT_CARD,
            day=timezone.localdate(),
            total=amount,
        )
        order.save(force_insert=True)
        order.sold_tickets = []
        card = GiftCard.objects.create(
            code=new_code(),
            value=amount,
            currency=settings.MUSEUM_CURRENCY,
            order=order,
            buyer=buyer,
            email=email,
            language=language,
        )
        held = stays_held(order)
        # Confirmed at once (a partner's), the card is issued; then the sale is recorded, as
        # every new order's is once its lines stand (its receipt issued with it).
        settle_new(order, held=held, saved=True)
        record_new(
            order, by=seller or buyer, held=held, changes={"total": amount, "giftcard": card.pk}
        )
    card.refresh_from_db()
    card.order = order
    return card


def issue_on_confirmation(sender, *, order: Order, **kwargs) -> None:
    """The cards an order sold hold their value once it is confirmed (orders.signals), in the
    confirmation's transaction."""
    if not order.sells_gift_cards:
        return
    now = timezone.now()
    for card in GiftCard.objects.select_for_update().filter(order=order, issued_at__isnull=True):
        card.issued_at, card.expires_on = now, expiry_of(now)
        card.save(update_fields=["issued_at", "expires_on"])
        _move(card, TransactionKind.ISSUED, card.value, order=order)


def expiry_of(issued: dt.datetime) -> dt.date:
    year = timezone.localtime(issued).year + settings.MUSEUM_GIFT_CARD_YEARS
    return dt.date(year, 12, 31)


def card_of_code(typed: str) -> GiftCard:
    """The issued card `typed` names; UnknownGiftCard for a code of no card, or of one not
    issued yet (not paid), alike."""
    code = read_code(typed)
    card = GiftCard.objects.filter(code=code, issued_at__isnull=False).first() if code else None
    if card is None:
        raise UnknownGiftCard()
    return card


def as_voucher_code(typed: str) -> IsGiftCard | None:
    """A gift card's code typed as a voucher's: the sale answers that it is a gift card, to pay
    with (registered with orders.services.vouchers.register_other_codes); None for any other."""
    code = read_code(typed)
    if code and GiftCard.objects.filter(code=code, issued_at__isnull=False).exists():
        return IsGiftCard()
    return None


def spendable_amount(*, code: str, order: Order, due: Decimal) -> tuple[Decimal, GiftCard]:
    """What the card of `code` would pay of `order`: what it holds, up to `due`. Refused: a gift
    card's order (a card does not buy a card), an unknown, expired or empty card."""
    if order.sells_gift_cards:
        raise GiftCardForGiftCard()
    card = card_of_code(code)
    _refuse_expired(card)
    balance = card.balance()
    if balance <= 0:
        raise InsufficientBalance()
    return min(balance, due), card


def redeem(*, card_id, payment: Payment) -> Transaction:
    """`payment.amount` off the card for `payment`, under the card's lock: InsufficientBalance if
    it holds less now (another payment took it first)."""
    with transaction.atomic():
        card = GiftCard.objects.select_for_update().get(pk=card_id)
        _refuse_expired(card)
        if card.balance() < payment.amount:
            raise InsufficientBalance()
        return _move(
            card,
            TransactionKind.REDEEMED,
            -payment.amount,
            order=payment.order,
            payment=payment,
            by=payment.taken_by,
        )


def credit_back(*, refund: Refund) -> Transaction:
    """A refund of a payment the card made goes back onto the card, expired or not."""
    assert refund.payment is not None
    with transaction.atomic():
        card = GiftCard.objects.select_for_update().get(pk=refund.payment.reference)
        return _move(
            card,
            TransactionKind.CREDITED,
            refund.amount,
            order=refund.order,
            payment=refund.payment,
            by=refund.cancelled_by,
        )


def adjust(*, card_id, amount: Decimal, reason: str, by) -> Transaction:
    """Staff change a card's balance by `amount`, with a reason (the ledger and the audit log
    keep both), under the card's lock as a payment takes it: never below 0, and only once it is
    issued (expired or not: staff honour an expired card's balance)."""
    if not reason.strip():
        raise InvalidInput("reason", _("Say why the balance changes."))
    if not amount:
        raise InvalidInput("amount", _("Change the balance by an amount other than 0."))
    with transaction.atomic():
        card = GiftCard.objects.select_for_update().get(pk=card_id)
        if card.status_on(timezone.localdate()) == GiftCardStatus.PENDING:
            raise GiftCardNotIssued()
        if card.balance() + amount < 0:
            raise InsufficientBalance()
        return _move(card, TransactionKind.ADJUSTED, amount, by=by, reason=reason.strip())


def _refuse_expired(card: GiftCard) -> None:
    if card.status_on(timezone.localdate()) == GiftCardStatus.EXPIRED:
        raise GiftCardExpired()


def _move(card: GiftCard, kind: str, amount: Decimal, **details) -> Transaction:
    move = Transaction.objects.create(card=card, kind=kind, amount=amount, **details)
    record(
        action=Action.CREATED if kind == TransactionKind.ISSUED else Action.CHANGED,
        obj=card,
        by=details.get("by"),
        changes={"kind": kind, "amount": amount, "transaction": move.pk},
    )
    return move


def issue_for_refunds(sender, *, order: Order, refunds: list[Refund], by, **kwargs) -> GiftCard:
    """A new card holding what `refunds` pay back of `order` (orders.signals), in the
    cancellation's transaction, for its buyer in the order's language; each refund names it."""
    now = timezone.now()
    value = sum((refund.amount for refund in refunds), Decimal("0"))
    card = GiftCard.objects.create(
        code=new_code(),
        value=value,
        currency=settings.MUSEUM_CURRENCY,
        buyer=order.buyer,
        email=order.email,
        language=order.language,
        issued_at=now,
        expires_on=expiry_of(now),
    )
    Refund.objects.filter(pk__in=[refund.pk for refund in refunds]).update(
        reference=_refund_reference(card), done_at=now
    )
    _move(card, TransactionKind.ISSUED, value, order=order, by=by, reason="refund")
    return card


def pay_back_instead(*, card_id, by) -> list[Refund]:
    """A card issued for refunds, not spent at all, taken back, and the refunds paid back through
    their payments after all (orders.services.payments.pay_back_instead). GiftCardSpent if any
    of it was spent (what is left stays on it, for staff to settle)."""
    with transaction.atomic():
        card = GiftCard.objects.select_for_update().get(pk=card_id)
        refunds = list(
            Refund.objects.select_for_update(of=("self",))
            .select_related("payment")
            .filter(state=RefundState.GIFT_CARD, reference=_refund_reference(card))
        )
        balance = card.balance()
        if not refunds or balance != sum((r.amount for r in refunds), Decimal("0")):
            raise GiftCardSpent()
        _move(card, TransactionKind.ADJUSTED, -balance, by=by, reason="paid back instead")
        orders_pay_back_instead(refunds=refunds)
    return refunds


def _refund_reference(card: GiftCard) -> str:
    return f"gift card {card.pk}"
