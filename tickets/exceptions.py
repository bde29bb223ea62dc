"""The problems of admitting a ticket's holder at the door: a kind and a reason each."""

from typing import Any

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem, NotFound
from orders import exceptions as orders_exceptions


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
        # A member card's booked visit refused: whose card it is, for the door page.
        self.membership: Any = None


class TicketCancelled(TicketRefused):
    default_code = "cancelled"
    title = _("Ticket cancelled")
    default_detail = _("The ticket was cancelled.")


class WrongDay(TicketRefused):
    default_code = "wrong_day"
    title = _("Ticket for another day")
    default_detail = _("The ticket is for another day.")


class NotPaid(TicketRefused, orders_exceptions.NotPaid):
    """The sale's refusal, at the door: its code, the ticket riding along."""

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


class MemberCardRefused(MuseumProblem):
    """A member card refused at the door; its membership rides along, so the door page shows
    whose card it is."""

    def __init__(self, detail=None, *, membership=None, **extra):
        super().__init__(detail, **extra)
        self.membership = membership


class UnknownMemberCard(NotFound):
    default_code = "unknown_member_card"
    title = _("Unknown member card")
    default_detail = _("No membership has that card.")


class CardNotValidYet(MemberCardRefused):
    default_code = "card_not_valid_yet"
    title = _("Member card not valid yet")
    default_detail = _("The membership is not valid yet.")


class CardExpired(MemberCardRefused):
    default_code = "card_expired"
    title = _("Member card expired")
    default_detail = _("The membership has expired.")


class CardCancelled(MemberCardRefused):
    default_code = "card_cancelled"
    title = _("Member card cancelled")
    default_detail = _("The membership was cancelled.")


class CardReplaced(MemberCardRefused):
    default_code = "card_replaced"
    title = _("Member card replaced")
    default_detail = _("The card was replaced by a new one: this one no longer admits.")


class CardNotPaid(MemberCardRefused):
    default_code = "card_pending"
    title = _("Membership not paid")
    default_detail = _("The membership is not paid (or a gift not redeemed) yet.")


class NoMemberVisit(MemberCardRefused):
    default_code = "no_member_visit"
    title = _("No member visit booked today")
    default_detail = _(
        "Today has timed entry: members book a visit in a slot (free), then the card admits it."
    )


class MemberVisitsUsed(MemberCardRefused):
    default_code = "member_visits_used"
    title = _("Member card used up today")
    default_detail = _("The card has admitted as many people today as it admits a day.")
