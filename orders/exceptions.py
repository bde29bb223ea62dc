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
