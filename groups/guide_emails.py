"""A guide's emails, in the museum's own language (a guide works for the museum): asked to lead
a tour, with its confirm and decline links; and told they are no longer needed for one.

Each is a task enqueued in the transaction that asks or releases the guide, on django-tasks'
database backend: it runs after the commit, never for a change rolled back, and is not lost
with the web worker. A request email whose ask was replaced before it ran (another guide, asked
again) sends nothing: its links would not work.
"""

import logging
from datetime import datetime

from django.conf import settings
from django.core.mail import EmailMessage
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django_tasks import task

from groups.guide_links import answer_token
from groups.models import AssignmentState, GroupRequest, Guide, GuideAssignment
from museum import i18n
from museum.text import one_line

logger = logging.getLogger(__name__)


def answer_link(assignment: GuideAssignment, answer: str = "") -> str:
    """The page that shows the tour and takes the guide's answer; `answer` (confirm, decline)
    says which button the guide's link was, for the page's heading."""
    path = reverse("guide-answer", args=[answer_token(assignment)])
    return settings.MUSEUM_PUBLIC_URL + path + (f"?answer={answer}" if answer else "")


def ask_guide(assignment: GuideAssignment) -> None:
    """In the caller's transaction: mail the assignment's guide the tour and their links."""
    assert assignment.asked_at is not None
    send_guide_request.enqueue(
        assignment_id=assignment.pk, asked_at=assignment.asked_at.isoformat()
    )


def release_guide(*, guide_id: int | None, group: GroupRequest, starts: datetime) -> None:
    """In the caller's transaction: tell the guide the group's tour at `starts` no longer needs
    them (its assignment may be gone by the time the email is made)."""
    assert guide_id is not None
    send_guide_released.enqueue(
        guide_id=guide_id, organisation=group.organisation, starts=starts.isoformat()
    )


@task()
def send_guide_request(*, assignment_id: int, asked_at: str) -> str:
    assignment = (
        GuideAssignment.objects.select_related("guide", "group__tour")
        .filter(pk=assignment_id, state=AssignmentState.ASKED)
        .first()
    )
    if assignment is None or assignment.asked_at != datetime.fromisoformat(asked_at):
        return "nothing to do: answered, or asked again since"
    guide, group = assignment.guide, assignment.group
    assert guide is not None and group.tour is not None
    with i18n.speaking(None):
        local = timezone.localtime(assignment.starts)
        words = {
            "guide": one_line(guide.name),
            "museum": one_line(settings.MUSEUM_NAME),
            "tour": one_line(group.tour.name),
            "day": i18n.day_in_words(local.date()),
            "starts": i18n.time_in_words(local.time()),
            "ends": i18n.time_in_words(timezone.localtime(assignment.ends).time()),
            "group": one_line(group.organisation),
            "people": group.headcount,
            "language": settings.SHIPPED_LANGUAGES.get(group.language, group.language),
            "confirm": answer_link(assignment, "confirm"),
            "decline": answer_link(assignment, "decline"),
        }
        subject = _("Can you lead a tour on %(day)s?") % words
        body = _(
            "Hello %(guide)s,\n\n"
            "can you lead this guided tour?\n\n"
            "%(tour)s\n"
            "%(day)s, %(starts)s to %(ends)s\n"
            "Group: %(group)s, %(people)s people\n"
            "Language: %(language)s\n\n"
            "To confirm: %(confirm)s\n"
            "To decline: %(decline)s\n\n"
            "Each link shows the tour first; your answer counts once.\n\n"
            "%(museum)s"
        )
        EmailMessage(subject=subject, body=body % words, to=[guide.email]).send()
    return "sent"


@task()
def send_guide_released(*, guide_id: int, organisation: str, starts: str) -> str:
    guide = Guide.objects.filter(pk=guide_id).first()
    if guide is None:
        return "nothing to do: no such guide"
    with i18n.speaking(None):
        words = {
            "guide": one_line(guide.name),
            "museum": one_line(settings.MUSEUM_NAME),
            "group": one_line(organisation),
            "when": i18n.moment_in_words(datetime.fromisoformat(starts)),
        }
        subject = _("Tour on %(when)s: you are no longer needed") % words
        body = _(
            "Hello %(guide)s,\n\n"
            "the guided tour for %(group)s on %(when)s no longer needs you: please take it off "
            "your calendar. Thank you.\n\n"
            "%(museum)s"
        )
        EmailMessage(subject=subject, body=body % words, to=[guide.email]).send()
    return "sent"
