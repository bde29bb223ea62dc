"""What a ticket sends: its confirmation email, and how a mail error is told without secrets."""

import re
import uuid

from django.conf import settings
from django.core.mail import EmailMessage

from museum.text import one_line
from tickets.images import ticket_image
from tickets.models import Ticket


def send_confirmation(*, ticket_id: uuid.UUID) -> None:
    ticket = Ticket.objects.select_related("event", "image", "category", "slot").get(pk=ticket_id)
    # One line: a line break stored in a name (before names refused them) would make the
    # subject a header injection, which Django refuses on every attempt.
    what = one_line(ticket.event.name) if ticket.event is not None else "general entry"
    message = EmailMessage(
        subject=f"Your ticket for {what} on {ticket.date:%d %B %Y}",
        body=(
            f"Thank you for your purchase.\n\nConfirmation code: {ticket.confirmation_code}\n"
            f"Date: {ticket.date:%A %d %B %Y}\nTicket: {what}\n\n"
            "Show the attached ticket at the door."
        ),
        to=[ticket.email],
    )
    image = ticket_image(ticket=ticket)
    message.attach(f"{ticket.confirmation_code}.png", bytes(image.png), "image/png")
    message.send()


# An address in a mail error's text: a mail server's refusal quotes the recipient (and the SMTP
# account is often an address too). Generous on purpose: a quoted local part, any non-space run
# around an @, a domain literal; better a word too many scrubbed than an address kept.
EMAIL_ADDRESS = re.compile(
    r"""(?:"[^"]*"|[^\s'"<>()\[\]{},;:]+)"""  # the local part: quoted, or a run of the rest
    r"""@(?:\[[^\]\s]*\]|[^\s'"<>()\[\]{},;:]+)"""  # the domain: a literal, or a run
)


def describe_mail_error(exc: Exception) -> str:
    """The class and message of a mail error, for the log, the email's row and its task result:
    without the SMTP password or any email address, which they would otherwise keep."""
    error = f"{type(exc).__name__}: {exc}"
    if settings.EMAIL_HOST_PASSWORD:
        error = error.replace(settings.EMAIL_HOST_PASSWORD, "********")
    return EMAIL_ADDRESS.sub("<address>", error)
