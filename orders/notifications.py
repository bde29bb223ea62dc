"""What an order sends: one confirmation email, with every ticket in one print-at-home PDF, and how
a mail error is told without secrets."""

import re
from io import BytesIO

from django.conf import settings
from django.core.mail import EmailMessage
from PIL import Image

from museum.text import one_line
from orders.models import Order
from tickets.images import ticket_image


def tickets_pdf(*, order: Order, valid_only: bool = False) -> bytes:
    """The order's tickets (or its valid ones), one a page, as a PDF: each page is the ticket's
    image, a cancelled one stamped CANCELLED."""
    tickets = order.tickets.select_related("event", "image", "category", "slot").order_by(
        "confirmation_code"
    )
    if valid_only:
        tickets = tickets.filter(cancelled_at__isnull=True)
    pages = [Image.open(BytesIO(bytes(ticket_image(ticket=t).png))) for t in tickets]
    out = BytesIO()
    first, *rest = pages
    first.save(out, format="PDF", save_all=True, append_images=rest, resolution=150)
    return out.getvalue()


def send_order_confirmation(*, order: Order) -> None:
    """Mail the order's confirmation with its tickets' PDF (orders.tasks retries a failure)."""
    # One line: a line break stored in a name (before names refused them) would make the
    # subject a header injection, which Django refuses on every attempt.
    what = one_line(order.event.name) if order.event else "general entry"
    when = f"{order.date:%A %d %B %Y}"
    if order.slot:
        when += f", entry from {order.slot.entry_time:%H:%M}"
    # What the order holds: a ticket cancelled while it was held is not confirmed to the buyer.
    valid = order.tickets.filter(cancelled_at__isnull=True).order_by("confirmation_code")
    codes = list(valid.values_list("confirmation_code", flat=True))
    count = len(codes)
    message = EmailMessage(
        subject=f"Your {count} ticket{'s' if count != 1 else ''} for {what} on {order.date}",
        body=(
            f"Thank you for your order.\n\nOrder: {order.confirmation_code}\n"
            f"Date: {when}\nTickets: {count}, {what}\n"
            f"Total: {order.total} {settings.MUSEUM_CURRENCY}\n"
            # Each ticket's code, which the door also takes read aloud or typed.
            f"Ticket codes: {', '.join(codes)}\n\n"
            "Print the attached tickets or show them on your phone at the door."
        ),
        to=[order.email],
    )
    message.attach(
        f"{order.confirmation_code}.pdf",
        tickets_pdf(order=order, valid_only=True),
        "application/pdf",
    )
    message.send()


def send_not_placed(*, order: Order, amount) -> None:
    """Tell the buyer their payment came after the order's places went, and is paid back."""
    EmailMessage(
        subject=f"Your order {order.confirmation_code} could not be kept",
        body=(
            f"Your payment for order {order.confirmation_code} ({order.date}) reached us after "
            "the order's hold had run out, and its places were sold meanwhile.\n\n"
            f"We are paying {amount} {settings.MUSEUM_CURRENCY} back the way you paid; banks "
            "take a few days to show it. We are sorry."
        ),
        to=[order.email],
    ).send()


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
