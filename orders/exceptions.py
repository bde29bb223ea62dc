"""The problems of orders: each a kind and a reason."""

from museum.exceptions import MuseumProblem


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
