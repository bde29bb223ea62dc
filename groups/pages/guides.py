"""A guide's pages: the answer page their email's links open (no account: the signed link is
the key), their calendar when signed in, and their calendar as an iCal feed at a secret address.

The answer page shows the tour and two buttons on GET and changes nothing (mail scanners and
link previews follow links); only the POST of a button confirms or declines, through
groups.services.guides.answer. It speaks the museum's own language, as the guide's email does,
and is limited per address like the other pages opened by a signed link. The feed is made with
`icalendar`, which the visitor's calendar entry already uses (orders.notifications).
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods
from icalendar import Calendar, Event

from groups.guide_emails import answer_link
from groups.models import AssignmentState, Guide, GuideAssignment
from groups.services import guides
from museum import i18n
from museum.errors import STATUS_OF_KIND
from museum.exceptions import MuseumProblem
from museum.text import one_line
from museum.throttling import page_within_address_rate

# How far back the feed reaches: a calendar keeps what it was told, so the recent past suffices.
FEED_PAST = timedelta(days=90)
# The page's two buttons, and what each says once pressed.
ANSWERS = {
    "confirm": gettext_lazy("Thank you: you lead this tour."),
    "decline": gettext_lazy("Declined. Thank you for telling us."),
}
# A tour's state in the guide's words (the model's labels are staff's, untranslated).
STATES = {
    AssignmentState.ASKED: gettext_lazy("Waiting for your answer"),
    AssignmentState.CONFIRMED: gettext_lazy("Confirmed"),
    AssignmentState.DECLINED: gettext_lazy("Declined"),
}


@never_cache
@require_http_methods(["GET", "POST"])
def answer_page(request, token: str):
    with i18n.speaking(None):
        if not page_within_address_rate(request):
            outcome = _("Too many requests: try again in a minute.")
            return _answer(request, None, outcome=outcome, status=429)
        try:
            if request.method == "POST":
                return _answer_posted(request, token)
            return _answer(request, guides.assignment_of_link(token))
        except MuseumProblem as problem:
            return _answer(
                request, None, outcome=str(problem.detail), status=STATUS_OF_KIND[problem.kind]
            )


def _answer_posted(request, token: str):
    choice = request.POST.get("answer")
    if choice not in ANSWERS:
        outcome = _("Please choose Confirm or Decline.")
        return _answer(request, guides.assignment_of_link(token), outcome=outcome, status=400)
    assignment = guides.answer(token=token, accept=choice == "confirm")
    return _answer(request, assignment, outcome=str(ANSWERS[choice]))


def _answer(request, assignment: GuideAssignment | None, *, outcome: str = "", status=200):
    context = {
        "museum": one_line(settings.MUSEUM_NAME),
        "language": i18n.current(),
        "outcome": outcome,
        "tour": _tour(assignment) if assignment else None,
        "open": assignment is not None and assignment.state == AssignmentState.ASKED,
        "chosen": request.GET.get("answer", ""),
    }
    return render(request, "groups/guide_answer.html", context, status=status)


def _tour(assignment: GuideAssignment) -> dict:
    """A tour as the guide's pages show it, in the active language."""
    group = assignment.group
    local = timezone.localtime(assignment.starts)
    return {
        "id": assignment.pk,
        "name": group.tour.name if group.tour else "",
        "day": i18n.day_in_words(local.date()),
        "starts": i18n.time_in_words(local.time()),
        "ends": i18n.time_in_words(timezone.localtime(assignment.ends).time()),
        "group": group.organisation,
        "people": group.headcount,
        "language": settings.SHIPPED_LANGUAGES.get(group.language, group.language),
        "accessibility": group.accessibility,
        "state": STATES.get(AssignmentState(assignment.state), ""),
        "asked": assignment.state == AssignmentState.ASKED,
    }


@login_required(login_url="admin:login")
@require_GET
def calendar_page(request):
    """The signed-in guide's own tours from now on, with the address of their feed."""
    guide = Guide.objects.filter(user=request.user).first()
    if guide is None:
        raise PermissionDenied("This page is for the museum's guides.")
    tours = []
    for assignment in guides.guide_calendar(guide, since=timezone.now()):
        tour = _tour(assignment)
        if tour["asked"]:
            tour["answer"] = answer_link(assignment)
        tours.append(tour)
    feed = settings.MUSEUM_PUBLIC_URL + reverse("guide-feed", args=[guide.feed_token])
    context = {"museum": one_line(settings.MUSEUM_NAME), "guide": guide, "tours": tours}
    return render(request, "groups/guide_calendar.html", {**context, "feed": feed})


@never_cache
@require_GET
def feed(request, feed_token: str):
    """The guide's tours as an iCalendar feed: one VEVENT per tour asked (TENTATIVE) or
    confirmed (CONFIRMED), from FEED_PAST ago on. Its address is the guide's secret."""
    guide = Guide.objects.filter(feed_token=feed_token).first()
    if guide is None or not feed_token:
        raise Http404()
    museum = one_line(settings.MUSEUM_NAME)
    calendar = Calendar()
    calendar.add("prodid", f"-//{museum}//Guided tours//EN")
    calendar.add("version", "2.0")
    calendar.add("x-wr-calname", f"{museum}: {guide.name}")
    with i18n.speaking(None):
        for assignment in guides.guide_calendar(guide, since=timezone.now() - FEED_PAST):
            calendar.add_component(_event(assignment, museum=museum))
    response = HttpResponse(calendar.to_ical(), content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = 'inline; filename="tours.ics"'
    return response


def _event(assignment: GuideAssignment, *, museum: str) -> Event:
    group = assignment.group
    confirmed = assignment.state == AssignmentState.CONFIRMED
    event = Event()
    # Stable per assignment: a calendar updates the entry when the tour changes.
    host = settings.MUSEUM_PUBLIC_URL.split("//", 1)[1]
    event.add("uid", f"guide-assignment-{assignment.pk}@{host}")
    event.add("dtstamp", assignment.answered_at or assignment.asked_at or timezone.now())
    event.add("dtstart", assignment.starts)
    event.add("dtend", assignment.ends)
    event.add("summary", f"{group.tour.name if group.tour else ''}: {group.organisation}")
    event.add("location", ", ".join(filter(None, [museum, settings.MUSEUM_ADDRESS])))
    event.add("status", "CONFIRMED" if confirmed else "TENTATIVE")
    event.add(
        "description",
        _("%(people)s people, in %(language)s. %(state)s.")
        % {
            "people": group.headcount,
            "language": settings.SHIPPED_LANGUAGES.get(group.language, group.language),
            "state": STATES[AssignmentState(assignment.state)],
        },
    )
    return event
