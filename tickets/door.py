"""The door page: staff scan tickets in a browser, through the same check-in as the API. It speaks
the staff member's language (LocaleMiddleware: the admin's language switch)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.utils import timezone
from django.utils.formats import date_format, time_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods

from museum.exceptions import MuseumProblem
from museum.permissions import MayCheckIn
from orders.models import Ticket
from tickets import services
from tickets.exceptions import AlreadyCheckedIn, TicketRefused, TooEarly, WrongDay

# What the desk reads for each refusal reason of services.check_in.
REFUSALS = {
    "forged": gettext_lazy("Forged, or not our ticket"),
    "unknown_ticket": gettext_lazy("Unknown ticket: no ticket has this code"),
    "unknown_code": gettext_lazy("Unknown code: no ticket or order has this code"),
    "ticket_changing": gettext_lazy("The ticket changed while it was checked: scan it again"),
    "cancelled": gettext_lazy("Cancelled ticket"),
    "wrong_day": gettext_lazy("Ticket for another day"),
    "already_checked_in": gettext_lazy("Already checked in"),
    "not_paid": gettext_lazy("Not paid: send the visitor to the desk"),
    "closed": gettext_lazy("The museum has closed for today"),
    "too_early": gettext_lazy("Too early"),
}


class ScanForm(forms.Form):
    # The API's limit for the same field: a QR token is ~124 characters.
    scanned = forms.CharField(max_length=400)


@dataclass(frozen=True)
class Line:
    """One ticket of a scanned order: admitted, or refused and why."""

    ticket: Ticket
    admitted: bool
    words: str


@dataclass(frozen=True)
class Verdict:
    admitted: bool
    words: str
    ticket: Ticket | None = None
    # An order's scan: its code, and each of its tickets (admitted first).
    order_code: str | None = None
    lines: tuple[Line, ...] = ()


def admitted_today() -> int:
    """Tickets checked in on the museum's today."""
    # A range on the column rather than checked_in_at__date, so an index on it can serve.
    midnight = timezone.make_aware(datetime.combine(timezone.localdate(), time.min))
    return Ticket.objects.filter(
        checked_in_at__gte=midnight, checked_in_at__lt=midnight + timedelta(days=1)
    ).count()


def reason(problem: MuseumProblem) -> str:
    """What the desk reads for a refusal."""
    ticket = getattr(problem, "ticket", None)
    words = str(REFUSALS.get(problem.default_code, problem.title))
    if isinstance(problem, AlreadyCheckedIn) and ticket is not None:
        at = time_format(timezone.localtime(ticket.checked_in_at), "H:i")
        words = _("%(refusal)s at %(time)s") % {"refusal": words, "time": at}
    elif isinstance(problem, WrongDay) and ticket is not None:
        words = f"{words}: {date_format(ticket.date, 'l j F Y')}"
    elif isinstance(problem, TooEarly):
        words = _("%(refusal)s: entry from %(time)s") % {
            "refusal": words,
            "time": problem.extra["entryTime"],
        }
    return words


def order_verdict(admission: services.Admission) -> Verdict:
    lines = [Line(ticket, True, _("Admitted")) for ticket in admission.admitted] + [
        Line(problem.ticket, False, reason(problem)) for problem in admission.refused
    ]
    count = len(admission.admitted)
    if count:
        words = ngettext(
            "Welcome: %(count)s of %(total)s ticket admitted",
            "Welcome: %(count)s of %(total)s tickets admitted",
            len(lines),
        ) % {"count": count, "total": len(lines)}
    else:
        words = nothing_admitted(admission.refused, lines)
    return Verdict(
        admitted=count > 0, words=words, order_code=admission.order_code, lines=tuple(lines)
    )


def nothing_admitted(refused: Sequence[TicketRefused], lines: Sequence[Line]) -> str:
    """Why none of an order's tickets was admitted: an order scanned again after its visitors
    went in is told as that, not as the first of its tickets' refusals."""
    inside = [problem.ticket for problem in refused if isinstance(problem, AlreadyCheckedIn)]
    if inside:
        last = max(ticket.checked_in_at for ticket in inside)
        return _("Already checked in: %(count)s of %(total)s, at %(time)s") % {
            "count": len(inside),
            "total": len(lines),
            "time": time_format(timezone.localtime(last), "H:i"),
        }
    return _("No ticket of the order admitted: %(refusal)s") % {"refusal": lines[0].words}


def refusal(problem: MuseumProblem) -> Verdict:
    admission = getattr(problem, "admission", None)
    if admission is not None:
        return order_verdict(admission)
    return Verdict(admitted=False, words=reason(problem), ticket=getattr(problem, "ticket", None))


def scan(*, scanned: str, by) -> Verdict:
    # The API's check-in service and its refusals: the door and the scanners cannot disagree.
    try:
        admission = services.check_in(scanned=scanned, by=by)
    except MuseumProblem as problem:
        return refusal(problem)
    if admission.order_code is not None:
        return order_verdict(admission)
    return Verdict(admitted=True, words=_("Welcome"), ticket=admission.ticket)


@login_required(login_url="admin:login")
@require_http_methods(["GET", "POST"])
def door(request):
    if not request.user.has_perm(MayCheckIn.permission):
        raise PermissionDenied(_("The door page is for staff who check tickets in."))
    verdict = None
    if request.method == "POST":
        form = ScanForm(request.POST)
        if form.is_valid():
            verdict = scan(scanned=form.cleaned_data["scanned"], by=request.user)
        elif form.has_error("scanned", "max_length"):
            verdict = Verdict(admitted=False, words=str(REFUSALS["unknown_code"]))
    context = {
        "verdict": verdict,
        "admitted_today": admitted_today(),
        "museum_name": settings.MUSEUM_NAME,
    }
    return render(request, "tickets/door.html", context)
