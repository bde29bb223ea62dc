"""The problems of orders: each a kind and a reason."""

from museum.exceptions import InvalidInput, MuseumProblem


class HoldExpired(MuseumProblem):
    default_code = "hold_expired"
    title = "Hold expired"
    default_detail = "The hold on these places ran out; they are back on sale."


class OrderCancelled(MuseumProblem):
    default_code = "cancelled"
    title = "Already cancelled"
    default_detail = "The order or ticket is already cancelled."


class TooLate(MuseumProblem):
    default_code = "too_late"
    title = "Too late to cancel"
    default_detail = "Tickets can be cancelled until shortly before the visit."


class CheckedIn(MuseumProblem):
    """A ticket already used at the door: cancelling it would refund a visit that took place."""

    default_code = "checked_in"
    title = "Ticket already used"
    default_detail = (
        "A ticket already checked in cannot be cancelled; staff may, saying so explicitly."
    )


class NeedsCompanion(InvalidInput):
    def __init__(self, names: list[str]):
        super().__init__("lines", f"{', '.join(names)}: only beside a ticket of another category.")


class PaymentRequired(MuseumProblem):
    """The order is held until a payment provider confirms its payment: no bare confirmation."""

    kind = "payment_required"
    default_code = "payment_required"
    title = "Payment required"
    default_detail = "The order is confirmed once paid: start a payment with POST .../payments."


class NothingToPay(MuseumProblem):
    default_code = "nothing_to_pay"
    title = "Nothing to pay"
    default_detail = "Only a held order with a price takes a payment."


class ProviderUnavailable(InvalidInput):
    def __init__(self, provider: str, offered: list[str]):
        super().__init__(
            "provider",
            f"'{provider}' is not offered to this account; "
            f"offered: {', '.join(offered) or 'none'}.",
        )


class ProviderFailed(MuseumProblem):
    """The payment provider refused or failed a call; nothing was charged."""

    kind = "provider_down"
    default_code = "provider_failed"
    title = "Payment provider failed"
    default_detail = "The payment provider did not answer as expected; try again shortly."


class OverLimit(MuseumProblem):
    """More places than one account, or one address within it, may take (orders.services.limits);
    `message` says which limit, with its value."""

    kind = "too_many"
    limit_name = ""
    message = ""

    def __init__(self, *, limit: int, who: str):
        super().__init__(
            self.message.format(limit=limit, who=who), limit=limit, limitName=self.limit_name
        )


class TooManyHeldPlaces(OverLimit):
    default_code = "too_many_held_places"
    title = "Too many places held"
    limit_name = "maxHeldPlaces"
    message = "At most {limit} places may be held at once by one {who}; pay or cancel a hold first."


class TooManyPlaces(OverLimit):
    default_code = "too_many_places"
    title = "Too many places for one day"
    limit_name = "maxPlacesPerDay"
    message = "At most {limit} places per visit date for one {who}, held or sold."


class TooManyPaymentAttempts(MuseumProblem):
    kind = "too_many"
    default_code = "too_many_payment_attempts"
    title = "Too many payment attempts"

    def __init__(self, *, limit: int):
        super().__init__(f"At most {limit} payments may be started for one order.", limit=limit)
