"""What a drop refuses, in its own words (museum/errors.py maps each kind to its status)."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem, NotAllowed, NotFound


class QueueTokenRequired(NotAllowed):
    default_code = "queue_token_required"
    default_detail = _(
        "These places are sold through the waiting room: join its line and buy with the "
        "admission it gives you (the Queue-Token header)."
    )


class QueueTokenUsed(NotAllowed):
    default_code = "queue_token_used"
    default_detail = _("This admission has bought already; each admission buys once.")


class QueueTokenExpired(NotAllowed):
    default_code = "queue_token_expired"
    default_detail = _("This admission has run out.")


class QueuePaused(MuseumProblem):
    """The line cannot be read (Redis is away): nothing of the drop sells until it can."""

    kind = "unavailable"
    default_code = "queue_paused"
    title = _("Service Unavailable")
    default_detail = _(
        "The waiting room is paused for a moment; everyone keeps their place. Try again shortly."
    )
    retry_after = 5


class QueueNotOpen(MuseumProblem):
    default_code = "queue_not_open"
    default_detail = _("The waiting room is not open yet.")


class DropClosed(MuseumProblem):
    default_code = "drop_closed"
    default_detail = _("The waiting room has closed.")


class MailboxInLine(MuseumProblem):
    default_code = "already_in_line"
    default_detail = _("Another account with this email address is already in line.")


class NotInLine(NotFound):
    default_code = "not_in_line"
    default_detail = _("You are not in this waiting room's line.")


class TooManyForDrop(MuseumProblem):
    default_code = "drop_max_tickets"
    default_detail = _("Too many tickets for one buyer of this sale.")


class NotSoldOut(MuseumProblem):
    default_code = "not_sold_out"
    default_detail = _(
        "The waiting list is for those the waiting room told the places are sold out: keep "
        "your place in line."
    )


class NotOnWaitingList(NotFound):
    default_code = "not_on_waiting_list"
    default_detail = _("You are not on this drop's waiting list.")
