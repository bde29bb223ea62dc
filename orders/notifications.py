"""What an order sends, in its language: one confirmation email, in plain text and HTML, with every
valid ticket in one print-at-home PDF and the visit as a calendar entry; and how a mail error is
told without secrets."""

import re
from collections import Counter
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.mail import EmailMessage, EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from icalendar import Calendar, Event

from museum import i18n
from museum.i18n import day_in_words, moment_in_words, money, time_in_words
from museum.text import one_line
from orders import documents
from orders.models import Order, Ticket
from orders.selectors import cancel_deadline

CALENDAR_NAME = "visit.ics"


def send_order_confirmation(*, order: Order) -> None:
    """Mail the order's confirmation with its tickets' PDF (orders.tasks retries a failure)."""
    with i18n.speaking(order.language):
        _send_confirmation(order)


def _send_confirmation(order: Order) -> None:
    # What the order holds: a ticket cancelled while it was held is not confirmed to the buyer.
    valid = list(documents.printed_tickets(order, valid_only=True))
    context = confirmation_context(order=order, tickets=valid)
    message = EmailMultiAlternatives(
        subject=subject(order=order, count=len(valid), day=context["day"]),
        body=render_to_string("orders/email/confirmation.txt", context),
        to=[order.email],
    )
    message.attach_alternative(
        render_to_string("orders/email/confirmation.html", context), "text/html"
    )
    message.attach(
        f"{order.confirmation_code}.pdf",
        documents.valid_tickets_pdf(order=order),
        "application/pdf",
    )
    message.attach(CALENDAR_NAME, visit_calendar(order=order), "text/calendar")
    message.send()


def subject(*, order: Order, count: int, day: str) -> str:
    # One line: a line break stored in a name (before names refused them) would make the
    # subject a header injection, which Django refuses on every attempt.
    if order.event is None:
        return ngettext(
            "Your %(count)s ticket for general entry on %(day)s",
            "Your %(count)s tickets for general entry on %(day)s",
            count,
        ) % {"count": count, "day": day}
    return ngettext(
        "Your %(count)s ticket for %(what)s on %(day)s",
        "Your %(count)s tickets for %(what)s on %(day)s",
        count,
    ) % {"count": count, "what": one_line(order.event.name), "day": day}


def confirmation_context(*, order: Order, tickets: list[Ticket]) -> dict:
    """What the email says, worded in the active language (the order's); the same for both its
    parts."""
    hours = documents.opening_hours(documents.museum_day(order))
    times = documents.event_times(order.event)
    day = day_in_words(order.date)
    if order.slot:
        when = _("%(day)s, entry from %(time)s") % {
            "day": day,
            "time": time_in_words(order.slot.entry_time),
        }
    elif times:
        when = _("%(day)s, %(times)s") % {"day": day, "times": times}
    elif hours:
        when = _("%(day)s, open %(hours)s") % {"day": day, "hours": hours}
    else:
        when = day
    per_category = Counter((_category(ticket), ticket.price) for ticket in tickets)
    return {
        "museum": one_line(settings.MUSEUM_NAME),
        "address": [part.strip() for part in settings.MUSEUM_ADDRESS.split(",") if part.strip()],
        "code": order.confirmation_code,
        "what": documents.what_of(order),
        "day": day,
        "when": when,
        "lines": [
            {
                "count": count,
                "category": name,
                "price": money(price),
                "amount": money(price * count),
            }
            for (name, price), count in per_category.items()
        ],
        "total": money(order.total),
        "codes": [ticket.confirmation_code for ticket in tickets],
        "deadline": moment_in_words(cancel_deadline(order=order)),
        "calendar": CALENDAR_NAME,
        "language": translation.get_language() or settings.LANGUAGE_CODE,
    }


def _category(ticket: Ticket) -> str:
    return one_line(ticket.category.name) if ticket.category else _("Visitor")


def visit_calendar(*, order: Order) -> bytes:
    """The visit as an iCalendar entry, in the museum's zone and the active language: from the
    slot's entry time (or the event's start, or the day's opening) to the event's end (or the
    day's closing); all day when those are unknown. Its UID is the order's, so a second copy
    updates the entry rather than adding one."""
    museum = one_line(settings.MUSEUM_NAME)
    calendar = Calendar()
    calendar.add("prodid", f"-//{museum}//Tickets//EN")
    calendar.add("version", "2.0")
    calendar.add("method", "PUBLISH")
    event = Event()
    event.add("uid", str(order.pk))
    event.add("dtstamp", order.confirmed_at or timezone.now())
    event.add("summary", f"{documents.what_of(order)}, {museum}")
    event.add("location", ", ".join(filter(None, [museum, settings.MUSEUM_ADDRESS])))
    count = order.tickets.filter(cancelled_at__isnull=True).count()
    event.add(
        "description",
        ngettext(
            "Order %(code)s: %(count)s ticket. Bring the tickets of the confirmation email.",
            "Order %(code)s: %(count)s tickets. Bring the tickets of the confirmation email.",
            count,
        )
        % {"code": order.confirmation_code, "count": count},
    )
    start, end = visit_times(order=order)
    event.add("dtstart", start)
    event.add("dtend", end)
    calendar.add_component(event)
    calendar.add_missing_timezones()
    return calendar.to_ical()


def visit_times(*, order: Order) -> tuple[datetime, datetime] | tuple[date, date]:
    day = documents.museum_day(order)
    event = order.event
    opens = order.slot.entry_time if order.slot else (day.opens_at if day else None)
    closes = day.closes_at if day and not day.is_closed else None
    if event is not None:
        opens = event.starts_at or opens
        closes = event.ends_at or closes
    if opens is None or closes is None or closes <= opens:
        return order.date, order.date + timedelta(days=1)  # all day: the hours are unknown
    zone = ZoneInfo(settings.TIME_ZONE)
    # Whole minutes: a day open "until midnight" closes at 23:59, not at 23:59:59.999999.
    closes = time(closes.hour, closes.minute)
    return (
        datetime.combine(order.date, opens, tzinfo=zone),
        datetime.combine(order.date, closes, tzinfo=zone),
    )


def send_not_placed(*, order: Order, amount) -> None:
    """Tell the buyer, in the order's language, that their payment came after the order's places
    went, and is paid back."""
    with i18n.speaking(order.language):
        words = {
            "code": order.confirmation_code,
            "day": day_in_words(order.date),
            "amount": money(amount),
        }
        EmailMessage(
            subject=_("Your order %(code)s could not be kept") % words,
            body=_(
                "Your payment for order %(code)s (%(day)s) reached us after the order's hold had "
                "run out, and its places were sold meanwhile.\n\n"
                "We are paying %(amount)s back the way you paid; banks take a few days to show "
                "it. We are sorry."
            )
            % words,
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
