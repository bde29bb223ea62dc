"""The door page: staff scan tickets in a browser, through the same check-in as the API. It speaks
the staff member's language (LocaleMiddleware: the admin's language switch)."""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Sum
from django.shortcuts import render
from django.utils import timezone
from django.utils.formats import date_format, time_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods

from groups.exceptions import GroupNotAdmitted, TooManyArriving
from groups.services import day
from museum.exceptions import MuseumProblem
from museum.permissions import MayCheckIn
from orders.models import MemberEntry, Membership, Ticket
from tickets import groups, members, services
from tickets.exceptions import AlreadyCheckedIn, TicketRefused, TooEarly, WrongDay
from tickets.selectors import scan_key

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
    "unknown_member_card": gettext_lazy("Unknown member card"),
    "card_not_valid_yet": gettext_lazy("Member card not valid yet"),
    "card_expired": gettext_lazy("Member card expired"),
    "card_cancelled": gettext_lazy("Member card cancelled"),
    "card_replaced": gettext_lazy("Replaced card: it no longer admits"),
    "card_pending": gettext_lazy("Membership not paid yet: send the member to the desk"),
    "no_member_visit": gettext_lazy("No member visit booked for today: book one at the desk"),
    "member_visits_used": gettext_lazy("The card has admitted all it admits today"),
}


class ScanForm(forms.Form):
    # The API's limit for the same field: a QR token is ~124 characters.
    scanned = forms.CharField(max_length=400)
    # A member card on a day without slots: how many come in (empty: all the card still admits).
    people = forms.IntegerField(required=False, min_value=1, max_value=20)
    # A group's order code: how many arrived, the door's answer to its question (GroupQuestion).
    arrived = forms.IntegerField(required=False, min_value=1)


@dataclass(frozen=True)
class GroupQuestion:
    """A group's order code scanned: before admitting, the door asks how many arrived, with
    those still to come as the answer given."""

    scanned: str
    organisation: str
    headcount: int
    left: int

    @property
    def words(self) -> str:
        return _("Group: %(organisation)s, %(headcount)s booked. How many arrived?") % {
            "organisation": self.organisation,
            "headcount": self.headcount,
        }


@dataclass(frozen=True)
class GroupShown:
    """What the door shows of a group it admitted."""

    organisation: str
    code: str
    headcount: int
    arrived: int
    admitted: int


@dataclass(frozen=True)
class MemberCard:
    """What the door shows of a scanned member card, so staff can check its holder."""

    holder_name: str
    type_name: str
    valid_until: date | None

    @classmethod
    def of(cls, membership: Membership) -> "MemberCard":
        return cls(
            holder_name=membership.holder_name,
            type_name=membership.membership_type.name,
            valid_until=membership.valid_until,
        )


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
    member: MemberCard | None = None
    group: GroupShown | None = None


def admitted_today() -> int:
    """Visitors let in on the museum's today: tickets checked in, and members' walk-ins."""
    today = timezone.localdate()
    # A range on the column rather than checked_in_at__date, so an index on it can serve.
    midnight = timezone.make_aware(datetime.combine(today, time.min))
    tickets = Ticket.objects.filter(
        checked_in_at__gte=midnight, checked_in_at__lt=midnight + timedelta(days=1)
    ).count()
    walk_ins = MemberEntry.objects.filter(date=today).aggregate(people=Sum("people"))["people"]
    return tickets + (walk_ins or 0)


def reason(problem: MuseumProblem) -> str:
    """What the desk reads for a refusal."""
    ticket = getattr(problem, "ticket", None)
    if isinstance(problem, GroupNotAdmitted | TooManyArriving):
        return _("Group refused: %(reason)s") % {"reason": problem.detail}
    words = str(REFUSALS.get(problem.default_code, problem.title))
    if isinstance(problem, AlreadyCheckedIn) and ticket is not None:
        at = time_format(timezone.localtime(ticket.checked_in_at), "H:i")
        words = _("%(refusal)s at %(time)s") % {"refusal": words, "time": at}
    elif isinstance(problem, WrongDay) and ticket is not None:
        words = f"{words}: {date_format(ticket.date, 'l j F Y')}"
    elif problem.default_code == "member_visits_used" and "left" in problem.extra:
        words = _("%(refusal)s: %(left)s of %(admits)s left") % {
            "refusal": words,
            "left": problem.extra["left"],
            "admits": problem.extra["admits"],
        }
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


def group_question(scanned: str) -> GroupQuestion | None:
    """The question the door asks before admitting a group the scanned text names by its
    order's code, if the group may come in today (else None: the scan itself says why not)."""
    try:
        group = groups.group_of(scan_key(scanned))
    except MuseumProblem:
        return None  # not a code: the scan says so
    if group is None or day.admission_refusal(group, today=timezone.localdate()) is not None:
        return None
    return GroupQuestion(
        scanned=scanned.strip(),
        organisation=group.organisation,
        headcount=group.headcount,
        left=day.arrivals_left(group),
    )


def scan(
    *, scanned: str, by, people: int | None = None, arrived: int | None = None
) -> Verdict | GroupQuestion:
    # The API's check-in service and its refusals: the door and the scanners cannot disagree.
    if arrived is None and (question := group_question(scanned)) is not None:
        return question
    try:
        admission = members.admit(
            scanned=scanned, by=by, people=people if arrived is None else arrived
        )
    except MuseumProblem as problem:
        membership = getattr(problem, "membership", None)
        if membership is not None:  # a member card's refusal shows whose card it is
            return replace(refusal(problem), member=MemberCard.of(membership))
        return refusal(problem)
    if isinstance(admission, members.MemberAdmission):
        return member_verdict(admission)
    if isinstance(admission, groups.GroupAdmission):
        return group_verdict(admission)
    if admission.order_code is not None:
        return order_verdict(admission)
    return Verdict(admitted=True, words=_("Welcome"), ticket=admission.ticket)


def member_verdict(admitted: members.MemberAdmission) -> Verdict:
    """A member card's verdict: its booked visit's tickets, or the walk-ins it let in, with its
    holder shown either way."""
    card = MemberCard.of(admitted.membership)
    if admitted.admission is not None:
        return replace(order_verdict(admitted.admission), member=card)
    words = ngettext(
        "Welcome, member: %(count)s admitted (%(left)s more today)",
        "Welcome, members: %(count)s admitted (%(left)s more today)",
        admitted.people,
    ) % {"count": admitted.people, "left": admitted.left_today}
    return Verdict(admitted=True, words=words, member=card)


def group_verdict(admitted: groups.GroupAdmission) -> Verdict:
    """A group's verdict: how many came in now, and of its headcount in all."""
    group = admitted.group
    arrived = group.arrived or 0
    values = {
        "organisation": group.organisation,
        "count": admitted.admitted,
        "arrived": arrived,
        "headcount": admitted.headcount,
    }
    if admitted.admitted == arrived:
        words = _("Group: %(organisation)s, %(arrived)s of %(headcount)s admitted") % values
    else:
        words = (
            _("Group: %(organisation)s, %(count)s more admitted: %(arrived)s of %(headcount)s")
            % values
        )
    if (turned := admitted.people - admitted.admitted) > 0:
        words += " · " + ngettext(
            "%(count)s more than booked not admitted",
            "%(count)s more than booked not admitted",
            turned,
        ) % {"count": turned}
    shown = GroupShown(
        organisation=group.organisation,
        code=group.code,
        headcount=admitted.headcount,
        arrived=arrived,
        admitted=admitted.admitted,
    )
    return Verdict(
        admitted=True, words=words, order_code=admitted.admission.order_code, group=shown
    )


@login_required(login_url="admin:login")
@require_http_methods(["GET", "POST"])
def door(request):
    if not request.user.has_perm(MayCheckIn.permission):
        raise PermissionDenied(_("The door page is for staff who check tickets in."))
    verdict: Verdict | GroupQuestion | None = None
    if request.method == "POST":
        form = ScanForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            verdict = scan(
                scanned=data["scanned"],
                by=request.user,
                people=data["people"],
                arrived=data["arrived"],
            )
        elif set(form.errors) == {"people"}:
            verdict = Verdict(
                admitted=False, words=_("People coming in: a number from 1 to 20, or empty.")
            )
        elif set(form.errors) == {"arrived"}:
            verdict = Verdict(admitted=False, words=_("People arrived: a number from 1."))
        else:
            # Nothing a ticket's code could be (too long, empty, a NUL character): a verdict
            # all the same, which the page's script shows as it shows any other.
            verdict = Verdict(admitted=False, words=str(REFUSALS["unknown_code"]))
    question = verdict if isinstance(verdict, GroupQuestion) else None
    context = {
        "verdict": None if question else verdict,
        "question": question,
        "admitted_today": admitted_today(),
        "museum_name": settings.MUSEUM_NAME,
    }
    return render(request, "tickets/door.html", context)
