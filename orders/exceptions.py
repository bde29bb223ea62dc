"""The problems of the sale: each a kind and a reason."""

from datetime import UTC, datetime

from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from museum.exceptions import InvalidInput, MuseumProblem, NotFound


class DateInPast(MuseumProblem):
    kind = "invalid"
    default_code = "date_in_past"
    title = _("Date in the past")
    default_detail = _("Tickets are sold from the museum's today onwards.")


class MuseumClosed(MuseumProblem):
    kind = "invalid"
    default_code = "museum_closed"
    title = _("Museum closed")
    default_detail = _("The museum is not open on that date.")


class EventNotOnDate(MuseumProblem):
    kind = "invalid"
    default_code = "event_not_on_date"
    title = _("Event not on that date")
    default_detail = _("The event does not run on that date.")


class UnknownEvent(NotFound):
    default_code = "unknown_event"
    title = _("Unknown event")
    default_detail = _("There is no such event, or it was cancelled.")


class SoldOut(MuseumProblem):
    """Sold out, knowing which row was full (`scope`: slot, day or event_date), which the
    earliest-slot search needs and the answer does not show."""

    default_code = "sold_out"
    title = _("Sold out")
    default_detail = _("There are no places left on that date.")

    def __init__(self, detail=None, *, scope: str = "day", **extra):
        super().__init__(detail, **extra)
        self.scope = scope


class HoldExpired(MuseumProblem):
    default_code = "hold_expired"
    title = _("Hold expired")
    default_detail = _("The hold on these places ran out; they are back on sale.")


class HoldTooLong(MuseumProblem):
    """An extension past the latest a hold may last (orders.services.holds.extend_hold)."""

    kind = "conflict"
    default_code = "hold_too_long"
    title = _("Hold too long")

    def __init__(self, *, latest: datetime):
        moment = latest.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        super().__init__(
            _(
                "The hold cannot last past %(latest)s UTC: confirm by then, or the places go "
                "back on sale."
            )
            % {"latest": moment},
            latest=latest.astimezone(UTC).isoformat(),
        )


class OrderCancelled(MuseumProblem):
    default_code = "cancelled"
    title = _("Already cancelled")
    default_detail = _("The order or ticket is already cancelled.")


class TooLate(MuseumProblem):
    default_code = "too_late"
    title = _("Too late to cancel")
    default_detail = _("Tickets can be cancelled until shortly before the visit.")


class GiftCardSold(MuseumProblem):
    default_code = "gift_card_sold"
    title = _("Gift card sold")
    default_detail = _(
        "A gift card paid for is not cancelled: it keeps its balance until it expires."
    )


class GroupOrder(MuseumProblem):
    """A group's order (paid by invoice) changes through its group: its numbers, its time."""

    default_code = "group_order"
    title = _("Group order")
    default_detail = _(
        "This is a group's order: its numbers and its time change through the group request."
    )


class CheckedIn(MuseumProblem):
    """A ticket already used at the door: cancelling it would refund a visit that took place."""

    default_code = "checked_in"
    title = _("Ticket already used")
    default_detail = _(
        "A ticket already checked in cannot be cancelled; staff may, saying so explicitly."
    )


class NeedsCompanion(InvalidInput):
    def __init__(self, names: list[str]):
        super().__init__(
            "lines",
            _("%(names)s: only beside a ticket of another category.") % {"names": ", ".join(names)},
        )


class PaymentRequired(MuseumProblem):
    """The order is held until a payment provider confirms its payment: no bare confirmation."""

    kind = "payment_required"
    default_code = "payment_required"
    title = _("Payment required")
    default_detail = _("The order is confirmed once paid: start a payment with POST .../payments.")


class NotPaid(MuseumProblem):
    """An order never paid (held, or its hold ran out) has no tickets to print, draw or send: one
    would pass for a paid ticket (orders.selectors.refuse_unless_printable). The door refuses its
    tickets with the same code (tickets.exceptions.NotPaid)."""

    default_code = "not_paid"
    title = _("Order not paid")
    default_detail = _("The order is not paid yet: its tickets come once it is.")


class NothingToPay(MuseumProblem):
    default_code = "nothing_to_pay"
    title = _("Nothing to pay")
    default_detail = _("Only a held order with a price takes a payment.")


class ProviderUnavailable(InvalidInput):
    def __init__(self, provider: str, offered: list[str]):
        super().__init__(
            "provider",
            _("'%(provider)s' is not offered to this account; offered: %(offered)s.")
            % {"provider": provider, "offered": ", ".join(offered) or _("none")},
        )


class ProviderFailed(MuseumProblem):
    """The payment provider refused or failed a call; nothing was charged."""

    kind = "provider_down"
    default_code = "provider_failed"
    title = _("Payment provider failed")
    default_detail = _("The payment provider did not answer as expected; try again shortly.")


class PaymentInProgress(MuseumProblem):
    """Another payment of the order started meanwhile: one is in progress at a time."""

    default_code = "payment_in_progress"
    title = _("Payment in progress")
    default_detail = _("Another payment of this order is in progress; try again shortly.")


class BadNotification(MuseumProblem):
    """A payment provider's call that does not verify, or is not the provider's shape: nothing is
    read from it, and the provider does not send it again."""

    kind = "invalid"
    default_code = "bad_notification"
    title = _("Bad notification")
    default_detail = _("The notification is not an event of the payment provider.")


class BadSignature(BadNotification):
    default_code = "bad_signature"
    default_detail = _("The notification's signature does not verify.")


class NotTakenAsAsked(MuseumProblem):
    """The provider, asked itself, does not say that the payment took what was asked (its amount,
    its currency, this payment): the order does not move, and the provider tries again later."""

    default_code = "not_succeeded"
    title = _("Payment not taken")
    default_detail = _("The payment provider does not report this payment taken as asked.")


class OverLimit(MuseumProblem):
    """More places than one account, or one address within it, may take (orders.services.limits);
    `messages` say which limit, with its value, for each of `who`: "account", "email address"."""

    kind = "too_many"
    limit_name = ""
    messages: dict[str, StrOrPromise] = {}

    def __init__(self, *, limit: int, who: str):
        super().__init__(
            self.messages[who] % {"limit": limit}, limit=limit, limitName=self.limit_name
        )


class TooManyHeldPlaces(OverLimit):
    default_code = "too_many_held_places"
    title = _("Too many places held")
    limit_name = "maxHeldPlaces"
    messages = {
        # A cancelled hold counts until its time would have run out (orders.services.limits),
        # so cancelling frees nothing: only paying, or the time, does.
        "account": _(
            "At most %(limit)s places may be held at once by one account, a cancelled hold "
            "included until its time would have run out: pay for a held order, or wait until a "
            "hold runs out."
        ),
        "email address": _(
            "At most %(limit)s places may be held at once by one email address, a cancelled hold "
            "included until its time would have run out: pay for a held order, or wait until a "
            "hold runs out."
        ),
        # A partner's cancellation gives its places back at once, and counts no longer.
        "partner": _(
            "At most %(limit)s places may be held unpaid at once by one sales partner: confirm "
            "or cancel a held booking, or wait until a hold runs out."
        ),
    }


class TooManyPlaces(OverLimit):
    default_code = "too_many_places"
    title = _("Too many places for one day")
    limit_name = "maxPlacesPerDay"
    messages = {
        "account": _("At most %(limit)s places per visit date for one account, held or sold."),
        "email address": _(
            "At most %(limit)s places per visit date for one email address, held or sold."
        ),
    }


class TooManyPaymentAttempts(MuseumProblem):
    kind = "too_many"
    default_code = "too_many_payment_attempts"
    title = _("Too many payment attempts")

    def __init__(self, *, limit: int):
        super().__init__(
            _("At most %(limit)s payments may be started for one order.") % {"limit": limit},
            limit=limit,
        )


class TooManyFreePlaces(OverLimit):
    default_code = "too_many_free_places"
    title = _("Too many free places")
    limit_name = "maxFreePlacesPerDay"
    messages = {
        "account": _("At most %(limit)s free places a day for one account."),
        "email address": _("At most %(limit)s free places a day for one email address."),
    }


class MemberVisitExists(MuseumProblem):
    """A membership admits one member visit a day, and that day has one held or confirmed."""

    default_code = "member_visit_exists"
    title = _("Member visit already booked")
    default_detail = _("This membership already has a member visit on that date.")


class MemberPlacesUsed(MuseumProblem):
    """A membership lets in at most its type's `admits` people a day, walk-ins at the door and
    its booked member places together; `admits` and `left` go with it."""

    default_code = "member_places_used"
    title = _("Membership used up that day")
    default_detail = _("The membership has let in or booked as many people that day as it admits.")


class UnknownMembership(NotFound):
    default_code = "unknown_membership"
    title = _("Unknown membership")
    default_detail = _("There is no such membership.")


class MembershipNotValid(MuseumProblem):
    """The membership does not admit on the date asked: pending, cancelled, expired or not valid
    yet. `validUntil` (its last valid day, or None) goes with it."""

    default_code = "membership_not_valid"
    title = _("Membership not valid")
    default_detail = _("The membership is not valid on that date.")


class GiftAlreadyRedeemed(MuseumProblem):
    default_code = "gift_already_redeemed"
    title = _("Gift already redeemed")
    default_detail = _("This gift membership has already been redeemed.")


class UnknownGift(NotFound):
    default_code = "unknown_gift"
    title = _("Unknown gift code")
    default_detail = _("There is no gift membership with this code.")


class GiftNotPaid(MuseumProblem):
    default_code = "gift_not_paid"
    title = _("Gift not paid")
    default_detail = _("This gift membership is not paid yet, or its purchase was cancelled.")


class MembershipNotRenewable(MuseumProblem):
    """Only an active membership (lapsed or not) is renewed: a pending one is not paid or not
    redeemed yet, a cancelled one is over."""

    default_code = "membership_not_renewable"
    title = _("Membership not renewable")
    default_detail = _("Only an active or expired membership can be renewed.")


class TooManyMemberships(OverLimit):
    default_code = "too_many_memberships"
    title = _("Too many memberships")
    limit_name = "maxMembershipsPerDay"
    messages = {
        "account": _("At most %(limit)s memberships may be bought by one account in 24 hours."),
        "email address": _(
            "At most %(limit)s memberships may be bought for one email address in 24 hours."
        ),
    }


class MembershipUsed(MuseumProblem):
    default_code = "membership_used"
    title = _("Membership already used")
    default_detail = _(
        "The membership has already admitted a member visit: only the museum's staff can cancel "
        "it now."
    )


class GiftRedeemed(MuseumProblem):
    default_code = "gift_redeemed"
    title = _("Gift redeemed")
    default_detail = _(
        "The gift membership has been redeemed: it is its holder's now, and only the museum's "
        "staff can cancel it."
    )


class NoMembershipCard(MuseumProblem):
    """A membership with no card to print, draw or send: one not paid yet (or a gift not
    redeemed yet) or cancelled would pass for a member's card (orders.selectors.
    refuse_unless_card_printable). An expired one keeps its card: it prints its last day."""

    default_code = "no_membership_card"
    title = _("No membership card")
    default_detail = _("The membership is not paid yet: its card comes once it is.")


class NoGiftCard(MuseumProblem):
    """A membership with no gift card to print or send: one that is not a gift, a gift not paid
    yet or whose purchase was cancelled, and a gift redeemed, whose code is spent (orders.
    selectors.refuse_unless_gift_card_printable)."""

    default_code = "no_gift_card"
    title = _("No gift card")
    default_detail = _("The gift membership is not paid yet: its gift card comes once it is.")


class VoucherNotApplicable(MuseumProblem):
    """A voucher code that does not reduce this order: unknown, out of its scope or validity.
    Anyone but staff is told only this (`reason` says why, for staff and the logs)."""

    default_code = "voucher_not_applicable"
    title = _("Voucher not applicable")
    default_detail = _("This code does not apply to this order.")

    def __init__(self, detail=None, *, reason: str = "unknown", **extra):
        super().__init__(detail, **extra)
        self.reason = reason


class VoucherUsedUp(MuseumProblem):
    default_code = "voucher_used_up"
    title = _("Voucher used up")
    default_detail = _("This voucher has no uses left for these tickets.")


class VoucherBudgetSpent(MuseumProblem):
    default_code = "voucher_budget_spent"
    title = _("Voucher budget spent")
    default_detail = _("This voucher has no discount left to give for these tickets.")


class IsGiftCard(MuseumProblem):
    default_code = "voucher_is_gift_card"
    title = _("A gift card, not a voucher")
    default_detail = _("This code is a gift card: pay with it when you pay for the order.")


class DonationGiven(MuseumProblem):
    """A donation is given once its order is paid: only staff give it back, one by one
    (orders.services.donations.refund_donation)."""

    default_code = "donation_given"
    title = _("Donation given")
    default_detail = _("A donation paid for is not cancelled; the museum's staff can refund it.")


class DonationRefunded(MuseumProblem):
    default_code = "donation_refunded"
    title = _("Donation refunded")
    default_detail = _("This donation was refunded already.")
