"""What a group's emails say, in the group's language (staff's copies in the museum's), in plain
text and HTML: the request as it is when the email is sent, and what the step means for the
group (received, approved with its invoice's terms, another time offered with its accept link,
declined with the reason, expired, its numbers changed, a deposit or balance due)."""

from dataclasses import dataclass, field
from datetime import date, time
from decimal import Decimal

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils import translation
from django.utils.translation import gettext as _

from groups import links
from groups.models import GroupEmail, GroupEmailKind, GroupRequest
from museum import i18n
from museum.i18n import day_in_words, moment_in_words, money, time_in_words
from museum.text import one_line
from orders.notifications import counted
from orders.receipts import attach_documents

# The kinds whose email carries the order's invoice (and the credit notes since).
WITH_INVOICE = {GroupEmailKind.APPROVED, GroupEmailKind.CHANGED, GroupEmailKind.CANCELLED}


@dataclass
class Letter:
    """One email's words: its subject, paragraphs, facts (label, value) and an optional link."""

    subject: str
    paragraphs: list[str]
    facts: list[tuple[str, str]] = field(default_factory=list)
    link: tuple[str, str] | None = None  # (words, URL)


def send_group_email(email: GroupEmail) -> None:
    group = email.group
    with i18n.speaking(email.language):
        if email.to_staff:
            letter, greeting = staff_letter(group, email.kind), ""
        else:
            letter = group_letter(group, email.kind)
            greeting = _("Dear %(name)s,") % {"name": group.contact_name}
        context = {
            "museum": one_line(settings.MUSEUM_NAME),
            "address": [part.strip() for part in settings.MUSEUM_ADDRESS.split(",") if part],
            "letter": letter,
            "greeting": greeting,
            "language": translation.get_language() or settings.LANGUAGE_CODE,
        }
        message = EmailMultiAlternatives(
            subject=letter.subject,
            body=render_to_string("groups/email/group.txt", context),
            to=[email.email],
        )
        html = render_to_string("groups/email/group.html", context)
        message.attach_alternative(html, "text/html")
        if not email.to_staff and email.kind in WITH_INVOICE and group.order is not None:
            attach_documents(message, group.order)
    message.send()


def group_letter(group: GroupRequest, kind: str) -> Letter:
    """The group's email of `kind`, in the active language."""
    return _LETTERS[GroupEmailKind(kind)](group, _words(group))


def _words(group: GroupRequest) -> dict:
    return {
        "code": group.code,
        "when": visit_in_words(group),
        "until": moment_in_words(group.expires_at) if group.expires_at else "",
    }


def _received(group: GroupRequest, words: dict) -> Letter:
    return Letter(
        _("Your group request %(code)s") % words,
        [
            _("Thank you: we have received your group's request for %(when)s.") % words,
            _(
                "Its places are held for you until %(until)s while our staff answer it. "
                "We will write to you again."
            )
            % words,
        ],
        request_facts(group),
    )


def _approved(group: GroupRequest, words: dict) -> Letter:
    return Letter(
        _("Your group visit on %(when)s is confirmed") % words,
        [
            _(
                "Your group's visit is confirmed, and its invoice is due. The door admits "
                "your group before it is paid."
            ),
            _("The invoice is attached; please quote the order's code with your payment."),
        ],
        [*request_facts(group), *invoice_facts(group)],
    )


def _offered(group: GroupRequest, words: dict) -> Letter:
    paragraphs = [
        _(
            "We cannot welcome your group at the time you asked for. We offer you %(when)s "
            "instead, and hold its places until %(until)s."
        )
        % words,
    ]
    if group.message:
        paragraphs.append(group.message)
    return Letter(
        _("Another time for your group visit: %(when)s") % words,
        paragraphs,
        request_facts(group),
        (_("Accept this time"), links.accept_url(group)),
    )


def _declined(group: GroupRequest, words: dict) -> Letter:
    paragraphs = [_("We are sorry: we cannot welcome your group as you asked.")]
    if group.message:
        paragraphs.append(_("Reason: %(reason)s") % {"reason": group.message})
    return Letter(
        _("Your group request %(code)s was declined") % words, paragraphs, request_facts(group)
    )


def _expired(group: GroupRequest, words: dict) -> Letter:
    return Letter(
        _("Your group request %(code)s has expired") % words,
        [
            _(
                "We could not answer your request in time, and the places it held have "
                "been given back. Please send a new request if you still wish to visit."
            )
        ],
        request_facts(group),
    )


def _changed(group: GroupRequest, words: dict) -> Letter:
    return Letter(
        _("Your group visit on %(when)s has changed") % words,
        [
            _(
                "Your group's numbers have changed. This is your visit as it is now; the "
                "invoice attached replaces the one sent before."
            )
        ],
        [*request_facts(group), *invoice_facts(group)],
    )


def _cancelled(group: GroupRequest, words: dict) -> Letter:
    paragraphs = [_("Your group's visit is cancelled.")]
    if group.message:
        paragraphs.append(_("Reason: %(reason)s") % {"reason": group.message})
    if group.order is not None:
        paragraphs.append(_("The documents attached say what is still due, if anything."))
    return Letter(
        _("Your group visit on %(when)s is cancelled") % words,
        paragraphs,
        [*request_facts(group), *invoice_facts(group)],
    )


def _deposit_reminder(group: GroupRequest, words: dict) -> Letter:
    return _reminder(
        group,
        _("Reminder: the deposit for your group visit is due"),
        _("The deposit of %(amount)s is due by %(due)s.")
        % {"amount": money(group.deposit or Decimal("0")), "due": _day(group.deposit_due)},
    )


def _balance_reminder(group: GroupRequest, words: dict) -> Letter:
    return _reminder(
        group,
        _("Reminder: the balance for your group visit is due"),
        _("The balance of %(amount)s is due by %(due)s.")
        % {"amount": money(balance_of(group)), "due": _day(group.balance_due)},
    )


def _reminder(group: GroupRequest, subject: str, what: str) -> Letter:
    return Letter(
        subject,
        [what, _("Please quote the order's code with your payment.")],
        [*request_facts(group), *invoice_facts(group)],
    )


_LETTERS = {
    GroupEmailKind.RECEIVED: _received,
    GroupEmailKind.APPROVED: _approved,
    GroupEmailKind.OFFERED: _offered,
    GroupEmailKind.DECLINED: _declined,
    GroupEmailKind.EXPIRED: _expired,
    GroupEmailKind.CHANGED: _changed,
    GroupEmailKind.CANCELLED: _cancelled,
    GroupEmailKind.DEPOSIT_REMINDER: _deposit_reminder,
    GroupEmailKind.BALANCE_REMINDER: _balance_reminder,
}


def staff_letter(group: GroupRequest, kind: str) -> Letter:
    """Staff's copy: a new request to answer, or one that expired unanswered."""
    words = {"code": group.code, "organisation": one_line(group.organisation)}
    if kind == GroupEmailKind.EXPIRED:
        subject = _("Group request %(code)s expired unanswered: %(organisation)s") % words
        paragraphs = [_("Its places have been given back, and the group has been told.")]
    else:
        subject = _("New group request %(code)s: %(organisation)s") % words
        paragraphs = [_("A group asks to visit. Please answer before its places are given back.")]
    facts = [
        *request_facts(group),
        (_("Contact"), f"{group.contact_name} <{group.email}>"),
        (_("Phone number"), group.phone),
        (_("Alternatives"), ", ".join(_alternative(one) for one in group.alternatives)),
        (_("Accessibility needs"), group.accessibility),
        (_("Comment"), group.comment),
    ]
    return Letter(subject, paragraphs, [(k, v) for k, v in facts if v], _admin_link(group))


def request_facts(group: GroupRequest) -> list[tuple[str, str]]:
    facts = [
        (_("Request"), group.code),
        (_("Group"), one_line(group.organisation)),
        (_("Visit"), visit_in_words(group)),
        (_("People"), people_in_words(group)),
    ]
    if group.age_group:
        facts.append((_("Age or school year"), group.age_group))
    if group.tour is not None:
        facts.append((_("Guided tour"), one_line(group.tour.name)))
    if group.order is not None:
        facts.append((_("Order"), group.order.confirmation_code))
    return facts


def invoice_facts(group: GroupRequest) -> list[tuple[str, str]]:
    """The invoice's terms, from the group's row: total, deposit and balance with their dates,
    what is still to pay, and the final-numbers date."""
    order = group.order
    if order is None:
        return []
    facts = [(_("Total"), money(order.total))]
    if group.deposit:
        facts.append(
            (
                _("Deposit"),
                _("%(amount)s, due by %(due)s")
                % {"amount": money(group.deposit), "due": _day(group.deposit_due)},
            )
        )
    if group.balance_due:
        facts.append(
            (
                _("Balance"),
                _("%(amount)s, due by %(due)s")
                % {"amount": money(balance_of(group)), "due": _day(group.balance_due)},
            )
        )
    facts.append((_("Still to pay"), money(order.due)))
    if group.final_numbers_date:
        facts.append((_("Final numbers by"), _day(group.final_numbers_date)))
    return facts


def balance_of(group: GroupRequest) -> Decimal:
    """What the invoice asks after the deposit."""
    total = group.order.total if group.order is not None else Decimal("0")
    return max(total - (group.deposit or Decimal("0")), Decimal("0"))


def visit_in_words(group: GroupRequest) -> str:
    day = day_in_words(group.date)
    return f"{day}, {time_in_words(group.entry_time)}" if group.entry_time else day


def people_in_words(group: GroupRequest) -> str:
    return ", ".join(
        f"{line.quantity} {counted(line.category, line.quantity)}"
        for line in group.lines.select_related("category")
    )


def _day(value) -> str:
    return day_in_words(value) if value else "–"


def _alternative(one: dict) -> str:
    try:
        day = day_in_words(date.fromisoformat(one.get("date") or ""))
        hour = time.fromisoformat(one["time"]) if one.get("time") else None
    except (TypeError, ValueError):
        return str(one)
    return f"{day}, {time_in_words(hour)}" if hour else day


def _admin_link(group: GroupRequest) -> tuple[str, str] | None:
    try:
        path = reverse("admin:groups_grouprequest_change", args=[group.pk])
    except NoReverseMatch:  # not in the admin
        return None
    return _("Answer it"), settings.MUSEUM_PUBLIC_URL + path
