"""The problems of selling tickets and of admitting their holders: a status and a reason each."""

from rest_framework import status

from museum.errors import MuseumProblem
from tickets.models import Ticket


class DateInPast(MuseumProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "date_in_past"
    title = "Date in the past"
    default_detail = "Tickets are sold from the museum's today onwards."


class MuseumClosed(MuseumProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "museum_closed"
    title = "Museum closed"
    default_detail = "The museum is not open on that date."


class EventNotOnDate(MuseumProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "event_not_on_date"
    title = "Event not on that date"
    default_detail = "The event does not run on that date."


class UnknownEvent(MuseumProblem):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "unknown_event"
    title = "Unknown event"
    default_detail = "There is no such event, or it was cancelled."


class SoldOut(MuseumProblem):
    status_code = status.HTTP_409_CONFLICT
    default_code = "sold_out"
    title = "Sold out"
    default_detail = "There are no places left on that date."


class ForgedTicket(MuseumProblem):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "forged"
    title = "Not our ticket"
    default_detail = "The code is not a ticket signed by this museum."


class UnknownTicket(MuseumProblem):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "unknown_ticket"
    title = "Ticket not found"
    default_detail = "No ticket has that code."


class TicketRefused(MuseumProblem):
    """A real ticket refused at the door; the ticket rides along for the door page's summary."""

    def __init__(self, detail=None, *, ticket: Ticket | None = None, **extra):
        super().__init__(detail, **extra)
        # An attribute, not an extra: extras become members of the API's problem body.
        self.ticket = ticket


class TicketCancelled(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "cancelled"
    title = "Ticket cancelled"
    default_detail = "The ticket was cancelled."


class WrongDay(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "wrong_day"
    title = "Ticket for another day"
    default_detail = "The ticket is for another day."


class NotPaid(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "not_paid"
    title = "Ticket not paid"
    default_detail = "The ticket's order is held, not confirmed: it is not paid yet."


class TooEarly(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "too_early"
    title = "Too early"
    default_detail = "The ticket is for a later entry time."


class AlreadyCheckedIn(TicketRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "already_checked_in"
    title = "Ticket already used"
    default_detail = "The ticket was already used."
