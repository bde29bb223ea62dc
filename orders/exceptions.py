"""The problems of orders: each a status and a reason."""

from rest_framework import status

from museum.errors import MuseumProblem
from tickets.exceptions import SoldOut


class HoldExpired(MuseumProblem):
    status_code = status.HTTP_409_CONFLICT
    default_code = "hold_expired"
    title = "Hold expired"
    default_detail = "The hold on these places ran out; they are back on sale."


class OrderCancelled(MuseumProblem):
    status_code = status.HTTP_409_CONFLICT
    default_code = "cancelled"
    title = "Already cancelled"
    default_detail = "The order or ticket is already cancelled."


class TooLate(MuseumProblem):
    status_code = status.HTTP_409_CONFLICT
    default_code = "too_late"
    title = "Too late to cancel"
    default_detail = "Tickets can be cancelled until shortly before the visit."


class SoldOutOn(SoldOut):
    """Sold out, knowing which row was full (`scope`: slot, day or event_date), which the
    earliest-slot search needs and the answer does not show."""

    def __init__(self, detail=None, *, scope: str, **extra):
        super().__init__(detail, **extra)
        self.scope = scope
