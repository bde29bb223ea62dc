"""What an order sends, in its language: one email, in plain text and HTML, saying what the order
holds when it is sent (confirmed; changed since, with what was paid, what goes back and what
stays valid; or cancelled), with every valid ticket in one print-at-home PDF and the visit as a
calendar entry, and its receipt or invoice and credit notes; and how a mail error is told
without secrets."""

import re
from collections import Counter
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.mail import EmailMessage, EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from icalendar import Calendar, Event

from audit.models import Action
from audit.services import history
from museum import i18n
from museum.i18n import day_in_words, money, time_in_words
from museum.text import one_line
from orders import documents, receipts, wallet_links
from orders.membership_notifications import send_membership_order_email
from orders.models import (
    Order,
    OrderKind,
    OrderStatus,
    RefundSource,
    Ticket,
    VisitorCategory,
)
from orders.selectors import OrderAccount, is_printable, order_account
from orders.services.receipts import charity_statement
from orders.services.taxes import donations_of, taxes_of

CALENDAR_NAME = "visit.ics"


# The email of an order of a kind an app above the sale sells (the giftcards app's cards),
# registered from that app's AppConfig.ready: sent, retried and counted by this one pipeline.
SENDERS: dict[str, Callable[..., None]] = {}


def register_email(kind: str, send: Callable[..., None]) -> None:
    """`send(order=...)` mails the orders of `kind` (OrderKind) instead of the tickets' email."""
    SENDERS[kind] = send


def send_order_confirmation(*, order: Order) -> None:
    """Mail the order's email, as the order is now (orders.tasks retries a failure): its
    confirmation, or after a change what it holds now, or that it is cancelled."""
    registered = SENDERS.get(order.ticket_type)
    if registered is not None:
        registered(order=order)
        return
    if order.sells_memberships:
        send_membership_order_email(order=order)
        return
    with i18n.speaking(order.language):
        if order.ticket_type == OrderKind.DONATION:
            _send_donation_email(order)
        else:
            _send_confirmation(order)


def _send_donation_email(order: Order) -> None:
    """A donation-only order's email: thanks, its gifts, its receipt attached."""
    context = {
        "museum": one_line(settings.MUSEUM_NAME),
        "address": [part.strip() for part in settings.MUSEUM_ADDRESS.split(",") if part.strip()],
        "code": order.confirmation_code,
        "cancelled": order.status == OrderStatus.CANCELLED,
        "donations": donation_lines(order),
        "total": money(order.total),
        "statement": charity_statement(order.language),
    }
    message = EmailMultiAlternatives(
        subject=_("Your donation to %(museum)s") % {"museum": context["museum"]},
        body=render_to_string("orders/email/donation.txt", context),
        to=[order.email],
    )
    receipts.attach_documents(message, order)
    message.send()


def donation_lines(order: Order) -> list[dict]:
    """The order's donations as its email lists them: "Acquisitions: €25.00"."""
    return [
        {
            "fund": one_line(gift.fund.name),
            "amount": money(gift.amount),
            "refunded": bool(gift.cancelled_at),
        }
        for gift in donations_of(order)
    ]


def _send_confirmation(order: Order) -> None:
    account = order_account(order=order)
    context = confirmation_context(order=order, account=account)
    message = EmailMultiAlternatives(
        subject=subject(order=order, account=account, day=context["day"], news=context["news"]),
        body=render_to_string("orders/email/confirmation.txt", context),
        to=[order.email],
    )
    message.attach_alternative(
        render_to_string("orders/email/confirmation.html", context), "text/html"
    )
    if account.valid:
        # What the order holds: a ticket cancelled is not sent again.
        message.attach(
            f"{order.confirmation_code}.pdf",
            documents.valid_tickets_pdf(order=order),
            "application/pdf",
        )
        message.attach(CALENDAR_NAME, visit_calendar(order=order), "text/calendar")
    receipts.attach_documents(message, order)
    message.send()


# What an email tells: the order confirmed, changed since, or cancelled.
CONFIRMED, CHANGED, CANCELLED = "confirmed", "changed", "cancelled"


def news_of(*, order: Order, account: OrderAccount) -> str:
    if order.status == OrderStatus.CANCELLED:
        return CANCELLED
    if account.cancelled or moved_since_confirmed(order):
        return CHANGED
    return CONFIRMED


def moved_since_confirmed(order: Order) -> bool:
    """Whether the order was moved (to another day or slot) after it was confirmed: the audit
    log's record of the move says it."""
    if order.confirmed_at is None:
        return False
    return history(order).filter(action=Action.CHANGED, at__gt=order.confirmed_at).exists()


def subject(*, order: Order, account: OrderAccount, day: str, news: str) -> str:
    # One line: a line break stored in a name (before names refused them) would make the
    # subject a header injection, which Django refuses on every attempt.
    count = len(account.valid)
    if news == CANCELLED:
        return _("Your order %(code)s is cancelled") % {"code": order.confirmation_code}
    if news == CHANGED:
        return ngettext(
            "Your order %(code)s has changed: %(count)s ticket on %(day)s",
            "Your order %(code)s has changed: %(count)s tickets on %(day)s",
            count,
        ) % {"code": order.confirmation_code, "count": count, "day": day}
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


def confirmation_context(*, order: Order, account: OrderAccount) -> dict:
    """What the email says, worded in the active language (the order's); the same for both its
    parts. Its sums add up: the tickets' total, less what goes back, is what stays valid."""
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
    cancelling = how_to_cancel(order=order, account=account)
    return {
        "museum": one_line(settings.MUSEUM_NAME),
        "address": [part.strip() for part in settings.MUSEUM_ADDRESS.split(",") if part.strip()],
        "code": order.confirmation_code,
        "what": documents.what_of(order),
        "day": day,
        "when": when,
        "news": news_of(order=order, account=account),
        "lines": priced_lines(account.valid + account.cancelled),
        "total": money(account.paid),
        "taxes": tax_lines(account.valid + account.cancelled),
        "cancelled": cancelled_lines(account.cancelled),
        "back": money(account.back) if account.back else "",
        "still_valid": money(account.still_valid),
        "codes": [ticket.confirmation_code for ticket in account.valid],
        "cancelling": cancelling,
        "cancelling_html": _linked(cancelling, documents.cancel_link(order)),
        "calendar": CALENDAR_NAME,
        "language": translation.get_language() or settings.LANGUAGE_CODE,
        "donations": donation_lines(order),
        "donate_link": documents.donate_link(order),
        "wallet": wallet_lines(order=order, account=account),
    }


def wallet_lines(*, order: Order, account: OrderAccount) -> list[dict]:
    """Each valid ticket's "Add to ... Wallet" links (orders.wallet_links), while the order's
    tickets may be shown (none for an order not paid, none once all are cancelled), in the
    active language; none while no wallet is set up."""
    if not is_printable(order):
        return []
    found = [
        {"code": ticket.confirmation_code, "links": wallet_links.links_for(ticket=ticket)}
        for ticket in account.valid
    ]
    return [line for line in found if line["links"]]


def tax_lines(tickets: list[Ticket]) -> list[dict]:
    """The tax in the total, per rate that has any (orders.services.taxes): "incl. 9 % tax:
    €2.48"."""
    return [
        {"rate": f"{rate.rate.normalize():f} %", "tax": money(rate.tax)}
        for rate in taxes_of(tickets)
        if rate.tax
    ]


def priced_lines(tickets: list[Ticket]) -> list[dict]:
    """The tickets per category and price, as the order's lines list them: "2 Adults at
    €15.00: €30.00"."""
    lines = Counter((ticket.category, ticket.price) for ticket in tickets)
    return [
        {
            "count": count,
            "category": counted(category, count),
            "price": money(price),
            "amount": money(price * count),
        }
        for (category, price), count in lines.items()
    ]


def cancelled_lines(tickets: list[Ticket]) -> list[dict]:
    """The cancelled tickets per category, with what goes back for them: nothing is said of money
    for tickets that cost nothing."""
    lines: dict = {}
    for ticket in tickets:
        count, back = lines.get(ticket.category, (0, Decimal("0")))
        paid_back = sum((refund.amount for refund in ticket.refunds.all()), Decimal("0"))
        lines[ticket.category] = (count + 1, back + paid_back)
    return [
        {"count": count, "category": counted(category, count), "back": money(back) if back else ""}
        for category, (count, back) in lines.items()
    ]


def counted(category: VisitorCategory | None, count: int) -> str:
    """The category's name for `count` visitors, on one line."""
    if category is None:
        return ngettext("visitor", "visitors", count)
    return one_line(category.counted(count))


def how_to_cancel(*, order: Order, account: OrderAccount) -> str:
    """What the email says of cancelling its valid tickets: until when and how, or that it is too
    late; money back promised only for tickets that cost some."""
    if not account.valid:
        return ""
    terms = documents.cancelling(order)
    if not terms.open:
        return _("The tickets of this order can no longer be cancelled online.")
    words = {"deadline": terms.deadline, "link": terms.link, "how": terms.instructions}
    if terms.instructions:
        return _("To cancel tickets of this order until %(deadline)s: %(how)s") % words
    if account.still_valid:
        return (
            _(
                "Until %(deadline)s you can cancel tickets of this order on its page, and get "
                "their price back: %(link)s. After that only the museum can cancel them."
            )
            % words
        )
    return (
        _(
            "Until %(deadline)s you can cancel tickets of this order on its page: %(link)s. "
            "After that only the museum can cancel them."
        )
        % words
    )


def _linked(text: str, link: str) -> str:
    """The text for HTML, the link in it made a link."""
    return mark_safe(escape(text).replace(escape(link), format_html('<a href="{0}">{0}</a>', link)))


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


def send_not_placed(*, order: Order, amount, reason: str = RefundSource.NOT_PLACED) -> None:
    """Tell the buyer, in the order's language, that their payment is paid back whole, and why
    (`reason`, the refund's source): it came after the order's places went, after the order was
    cancelled, or when the order was already paid."""
    with i18n.speaking(order.language):
        words = {
            "code": order.confirmation_code,
            "day": day_in_words(order.date),
            "amount": money(amount),
        }
        if reason == RefundSource.PAID_AFTER_CANCEL:
            subject = _("Your payment for order %(code)s is paid back") % words
            body = _(
                "Your payment for order %(code)s (%(day)s) reached us after the order was "
                "cancelled.\n\n"
                "We are paying %(amount)s back the way you paid; banks take a few days to show it."
            )
        elif reason == RefundSource.ALREADY_PAID:
            subject = _("Your payment for order %(code)s is paid back") % words
            body = _(
                "Your payment for order %(code)s (%(day)s) reached us when the order was already "
                "paid.\n\n"
                "We are paying %(amount)s back the way you paid; banks take a few days to show it."
            )
        else:
            subject = _("Your order %(code)s could not be kept") % words
            body = _(
                "Your payment for order %(code)s (%(day)s) reached us after the order's hold had "
                "run out, and its places were sold meanwhile.\n\n"
                "We are paying %(amount)s back the way you paid; banks take a few days to show "
                "it. We are sorry."
            )
        EmailMessage(subject=subject, body=body % words, to=[order.email]).send()


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
