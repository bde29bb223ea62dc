"""The problems of selling tickets and of admitting their holders: a kind and a reason each."""

from typing import Any

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem, NotFound


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


class ForgedTicket(MuseumProblem):
    kind = "invalid"
    default_code = "forged"
    title = _("Not our ticket")
    default_detail = _("The code is not a ticket signed by this museum.")


class UnknownTicket(NotFound):
    default_code = "unknown_ticket"
    title = _("Ticket not found")
    default_detail = _("No ticket has that code.")


class UnknownCode(NotFound):
    """Scanned text that is no signed token and no ticket's or order's confirmation code."""

    default_code = "unknown_code"
    title = _("Unknown code")
    default_detail = _("No ticket or order has that code.")


class TicketRefused(MuseumProblem):
    """A real ticket refused at the door; the ticket rides along for the door page's summary."""

    def __init__(self, detail=None, *, ticket=None, **extra):
        super().__init__(detail, **extra)
        # Attributes, not extras: extras become members of the API's problem body.
        self.ticket = ticket
        # An order's scan that admitted none of its tickets: the refusal of each (check_in).
        self.admission: Any = None


class TicketCancelled(TicketRefused):
    default_code = "cancelled"
    title = _("Ticket cancelled")
    default_detail = _("The ticket was cancelled.")


class WrongDay(TicketRefused):
    default_code = "wrong_day"
    title = _("Ticket for another day")
    default_detail = _("The ticket is for another day.")


class NotPaid(TicketRefused):
    default_code = "not_paid"
    title = _("Ticket not paid")
    default_detail = _("The ticket's order is held, not confirmed: it is not paid yet.")


class AfterClosing(TicketRefused):
    default_code = "closed"
    title = _("Museum closed")
    default_detail = _("The museum has closed for today.")


class TooEarly(TicketRefused):
    default_code = "too_early"
    title = _("Too early")
    default_detail = _("The ticket is for a later entry time.")


class TicketChanging(TicketRefused):
    """The ticket changed between the admission and the reading of its refusal, again and again."""

    default_code = "ticket_changing"
    title = _("Ticket changing")
    default_detail = _("The ticket changed while it was being checked in: scan it again.")


class AlreadyCheckedIn(TicketRefused):
    default_code = "already_checked_in"
    title = _("Ticket already used")
    default_detail = _("The ticket was already used.")
