"""A group's guided tour and its guides: how many it needs and what each earns (`plan_tour`,
`replan_tour`, `fee_of`), whether a guide can lead it (`why_not`, the one answer every face
asks, and `free_guides`), asking a guide (`assign`) and the guide's answer by the signed link of
their email (`answer`), and the month's tours per guide (`tours_by_guide`).

A guide is taken under their row's lock: two staff asking one guide for overlapping tours at
once are served one after the other, and the second finds the guide busy.
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import transaction
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from audit.models import Action
from audit.services import record, record_each
from groups.exceptions import (
    AlreadyAnswered,
    GuideLinkInvalid,
    GuideLinkOutdated,
    GuideNotFree,
    TourOver,
)
from groups.guide_emails import ask_guide, release_guide
from groups.guide_links import read_token
from groups.models import (
    AssignmentState,
    FeePer,
    GroupRequest,
    GroupStatus,
    Guide,
    GuideAbsence,
    GuideAssignment,
    GuideAvailability,
    TourProgramme,
)
from museum.exceptions import NotFound
from museum.money import ZERO, to_cent

# Why a guide cannot lead a tour, in staff's words (the desk, the admin, the API's problem).
REASONS = {
    "inactive": _("The guide is not active."),
    "language": _("The guide does not lead tours in this language."),
    "audience": _("The guide does not lead tours for this audience."),
    "not_working": _("The guide does not work at this time."),
    "busy": _("The guide leads another tour at this time."),
}

# The assignments that take a guide's time: asked (until they answer) and confirmed.
TAKEN = (AssignmentState.ASKED, AssignmentState.CONFIRMED)
# Without a guide, for the desk: none yet, or the one asked declined.
UNGUIDED = (AssignmentState.OPEN, AssignmentState.DECLINED)
# Groups that will not come: their tours need no guide.
GONE = (GroupStatus.DECLINED, GroupStatus.EXPIRED, GroupStatus.CANCELLED)


def tour_times(group: GroupRequest) -> tuple[datetime, datetime]:
    """When the group's tour starts and ends, in the museum's zone: at its entry time (on an
    untimed day, MUSEUM_GROUP_DEFAULT_TOUR_TIME), for the programme's duration."""
    assert group.tour is not None
    zone = ZoneInfo(settings.TIME_ZONE)
    begins = group.entry_time or time.fromisoformat(settings.MUSEUM_GROUP_DEFAULT_TOUR_TIME)
    starts = datetime.combine(group.date, begins, tzinfo=zone)
    # In absolute time: a tour across a change of the clocks lasts its minutes all the same.
    ends = starts.astimezone(ZoneInfo("UTC")) + timedelta(minutes=group.tour.duration_minutes)
    return starts, ends.astimezone(zone)


def fee_of(tour: TourProgramme, headcount: int) -> Decimal:
    """The tour's whole fee for a group of `headcount`: the fee per guide times the guides it
    needs, or the fee per tour (the programme's own answer, TourProgramme.fee_for)."""
    return tour.fee_for(headcount)


def fee_shares(tour: TourProgramme, guides: int) -> list[Decimal]:
    """What each of `guides` guides earns: the fee per guide each, or the tour's fee split
    equally, the cent left over on the first, so that the shares add up to the fee."""
    if guides <= 0:
        return []
    if tour.fee_per == FeePer.GUIDE:
        return [tour.fee] * guides
    share = to_cent(tour.fee / guides)
    return [tour.fee - share * (guides - 1)] + [share] * (guides - 1)


def plan_tour(group: GroupRequest) -> list[GuideAssignment]:
    """In the caller's transaction: the group's tour needs ceil(headcount / cap) guides, each an
    open assignment for the tour's times with its fee share. A group already planned is planned
    again for its headcount (`replan_tour`)."""
    if group.tour is None:
        return []
    if group.assignments.exists():
        return replan_tour(group)
    starts, ends = tour_times(group)
    shares = fee_shares(group.tour, group.tour.guides_needed(group.headcount))
    return GuideAssignment.objects.bulk_create(
        GuideAssignment(group=group, starts=starts, ends=ends, fee=share) for share in shares
    )


# Which assignments go first when a group needs fewer guides: those without a guide, then those
# declined, then those the guide has not answered, and a confirmed guide last; the latest first.
_REMOVAL_ORDER = [
    AssignmentState.OPEN,
    AssignmentState.DECLINED,
    AssignmentState.ASKED,
    AssignmentState.CONFIRMED,
]


def replan_tour(group: GroupRequest) -> list[GuideAssignment]:
    """After the group's headcount changed (to none: called off): open assignments added for
    the guides it needs now, or the surplus removed (a guide asked or confirmed for one is told
    by email); the fee shared again among those left. Returns them, in order. In the caller's
    transaction, or one of its own."""
    assert group.tour is not None
    # Read again: the lines the caller loaded may be those before the change.
    headcount = group.lines.aggregate(people=Sum("quantity", default=0))["people"]
    needed = group.tour.guides_needed(headcount)
    with transaction.atomic():
        rows = list(group.assignments.select_for_update().order_by("pk"))
        if len(rows) < needed:
            starts, ends = tour_times(group)
            rows += GuideAssignment.objects.bulk_create(
                GuideAssignment(group=group, starts=starts, ends=ends)
                for _ in range(needed - len(rows))
            )
        elif len(rows) > needed:
            surplus = sorted(rows, key=_removal_rank)[: len(rows) - needed]
            _remove(group, surplus)
            rows = [row for row in rows if row not in surplus]
        for row, share in zip(rows, fee_shares(group.tour, len(rows)), strict=True):
            if row.fee != share:
                row.fee = share
                row.save(update_fields=["fee"])
    return rows


def _removal_rank(row: GuideAssignment) -> tuple:
    latest = row.answered_at or row.asked_at or datetime.min.replace(tzinfo=ZoneInfo("UTC"))
    return (_REMOVAL_ORDER.index(AssignmentState(row.state)), -latest.timestamp(), -row.pk)


def _remove(group: GroupRequest, rows: Sequence[GuideAssignment]) -> None:
    record_each(
        entries=[(Action.DELETED, row, {"guide": row.guide_id, "state": row.state}) for row in rows]
    )
    for row in rows:
        if row.state in TAKEN:
            release_guide(guide_id=row.guide_id, group=group, starts=row.starts)
    GuideAssignment.objects.filter(pk__in=[row.pk for row in rows]).delete()


# --- Whether a guide can lead a tour -----------------------------------------------------------


@dataclass
class _Diary:
    """What answers `why_not` for some guides within a stretch of time, read in a few queries:
    their weekly hours, their exceptions by date, and the tours that already take their time."""

    weekly: dict[int, list[GuideAvailability]]
    exceptions: dict[tuple[int, date], list[GuideAbsence]]
    taken: dict[int, list[GuideAssignment]]


def _diary(guides: Sequence[Guide], *, first: datetime, last: datetime) -> _Diary:
    ids = [guide.pk for guide in guides]
    days = (timezone.localdate(first), timezone.localdate(last))
    diary = _Diary(weekly=defaultdict(list), exceptions=defaultdict(list), taken=defaultdict(list))
    for rule in GuideAvailability.objects.filter(guide_id__in=ids):
        diary.weekly[rule.guide_id].append(rule)
    for exception in GuideAbsence.objects.filter(guide_id__in=ids, date__range=days):
        diary.exceptions[(exception.guide_id, exception.date)].append(exception)
    busy = GuideAssignment.objects.filter(
        guide_id__in=ids, state__in=TAKEN, starts__lt=last, ends__gt=first
    ).only("pk", "guide_id", "starts", "ends")
    for assignment in busy:
        diary.taken[assignment.guide_id].append(assignment)  # type: ignore[index]
    return diary


def _minutes(moment: time) -> int:
    return moment.hour * 60 + moment.minute


def _working_hours(guide_id: int, day: date, diary: _Diary) -> list[tuple[int, int]]:
    """The stretches (minutes from midnight) the guide works on `day`: the weekday's hours less
    the times away (all day when an absence gives none), plus extra hours, merged."""
    exceptions = diary.exceptions.get((guide_id, day), [])
    away = [(e.starts, e.ends) for e in exceptions if not e.available]
    hours: list[tuple[int, int]] = []
    if not any(starts is None for starts, _ in away):
        for rule in diary.weekly.get(guide_id, []):
            if rule.weekday == day.weekday():
                hours += _less(
                    (_minutes(rule.starts), _minutes(rule.ends)),
                    [(_minutes(s), _minutes(e)) for s, e in away if s and e],
                )
    hours += [(_minutes(e.starts), _minutes(e.ends)) for e in exceptions if e.available]  # type: ignore[arg-type]
    merged: list[tuple[int, int]] = []
    for starts, ends in sorted(hours):
        if merged and starts <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], ends))
        else:
            merged.append((starts, ends))
    return merged


def _less(stretch: tuple[int, int], cuts: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    pieces = [stretch]
    for cut_starts, cut_ends in cuts:
        pieces = [
            piece
            for starts, ends in pieces
            for piece in ((starts, min(ends, cut_starts)), (max(starts, cut_ends), ends))
            if piece[0] < piece[1]
        ]
    return pieces


def _reason(
    guide: Guide,
    diary: _Diary,
    *,
    starts: datetime,
    ends: datetime,
    language: str,
    audience: str,
    exclude_assignment: int | None,
) -> str | None:
    if not guide.active:
        return "inactive"
    if language not in guide.languages:
        return "language"
    if audience not in guide.audiences:
        return "audience"
    local = timezone.localtime(starts)
    # The tour in minutes from the midnight it starts after: past 24 hours it crosses midnight,
    # which no day's hours cover.
    first = _minutes(local.time())
    last = first + int((ends - starts).total_seconds() // 60)
    if not any(s <= first and last <= e for s, e in _working_hours(guide.pk, local.date(), diary)):
        return "not_working"
    if any(
        other.pk != exclude_assignment and other.starts < ends and other.ends > starts
        for other in diary.taken.get(guide.pk, [])
    ):
        return "busy"
    return None


def why_not(
    guide: Guide,
    *,
    starts: datetime,
    ends: datetime,
    language: str,
    audience: str,
    exclude_assignment: int | None = None,
) -> str | None:
    """Why `guide` cannot lead a tour from `starts` to `ends` in `language` for `audience` (an
    OrganisationKind): a key of REASONS, or None when they can. `exclude_assignment` is the
    tour's own assignment, which does not make its guide busy."""
    diary = _diary([guide], first=starts, last=ends)
    return _reason(
        guide,
        diary,
        starts=starts,
        ends=ends,
        language=language,
        audience=audience,
        exclude_assignment=exclude_assignment,
    )


def free_guides(
    *,
    starts: datetime,
    ends: datetime,
    language: str,
    audience: str,
    exclude_assignment: int | None = None,
) -> list[Guide]:
    """The active guides with no reason not to lead the tour, by name (four queries)."""
    guides = list(Guide.objects.filter(active=True))
    diary = _diary(guides, first=starts, last=ends)
    return [
        guide
        for guide in guides
        if _reason(
            guide,
            diary,
            starts=starts,
            ends=ends,
            language=language,
            audience=audience,
            exclude_assignment=exclude_assignment,
        )
        is None
    ]


def free_guides_for(assignments: Sequence[GuideAssignment]) -> dict[int, list[Guide]]:
    """`free_guides` for each assignment (its group's language and audience), by its id: for a
    list of tours, in four queries whatever its length. The assignments' groups are loaded."""
    if not assignments:
        return {}
    guides = list(Guide.objects.filter(active=True))
    diary = _diary(
        guides,
        first=min(a.starts for a in assignments),
        last=max(a.ends for a in assignments),
    )
    return {
        assignment.pk: [
            guide
            for guide in guides
            if _reason(
                guide,
                diary,
                starts=assignment.starts,
                ends=assignment.ends,
                language=assignment.group.language,
                audience=assignment.group.organisation_kind,
                exclude_assignment=assignment.pk,
            )
            is None
        ]
        for assignment in assignments
    }


def unguided_tours(*, since: date | None = None) -> list[GuideAssignment]:
    """The tours still without a guide from `since` (the museum's today) on: assignments open or
    declined, with their group and tour, by time."""
    since = since or timezone.localdate()
    zone = ZoneInfo(settings.TIME_ZONE)
    return list(
        GuideAssignment.objects.filter(
            state__in=UNGUIDED, starts__gte=datetime.combine(since, time(), tzinfo=zone)
        )
        .select_related("group__tour", "guide")
        .exclude(group__status__in=GONE)
        .prefetch_related("group__lines")
        .order_by("starts", "group_id", "pk")
    )


# --- Asking a guide, and their answer ----------------------------------------------------------


def assign(*, assignment_id: int, guide_id: int, by) -> GuideAssignment:
    """Ask `guide_id` to lead the assignment's tour: refused (GuideNotFree, with the reason) when
    they cannot; else the assignment is asked, its earlier links void, and the guide mailed their
    confirm and decline links after the commit. A guide asked or confirmed before, replaced, is
    told they are no longer needed."""
    with transaction.atomic():
        # The guide first: every ask of one guide waits here for the one before it to commit.
        guide = Guide.objects.select_for_update().filter(pk=guide_id).first()
        if guide is None:
            raise NotFound()
        assignment = (
            GuideAssignment.objects.select_for_update(of=("self",))
            .select_related("group")
            .filter(pk=assignment_id)
            .first()
        )
        if assignment is None:
            raise NotFound()
        now = timezone.now()
        if assignment.ends <= now:
            raise TourOver()
        reason = why_not(
            guide,
            starts=assignment.starts,
            ends=assignment.ends,
            language=assignment.group.language,
            audience=assignment.group.organisation_kind,
            exclude_assignment=assignment.pk,
        )
        if reason:
            raise GuideNotFree(str(REASONS[reason]), reason=reason)
        before_guide, before_state = assignment.guide_id, assignment.state
        assignment.guide, assignment.state = guide, AssignmentState.ASKED
        assignment.asked_at, assignment.answered_at = now, None
        assignment.save(update_fields=["guide", "state", "asked_at", "answered_at"])
        record(
            action=Action.CHANGED,
            obj=assignment,
            by=by,
            changes={"guide": [before_guide, guide.pk], "state": [before_state, "asked"]},
        )
        if before_state in TAKEN and before_guide != guide.pk:
            release_guide(guide_id=before_guide, group=assignment.group, starts=assignment.starts)
        ask_guide(assignment)
    return assignment


def assignment_of_link(token: str) -> GuideAssignment:
    """The assignment a guide's link asks about, with its guide, group and tour: GuideLinkInvalid
    when the museum did not sign it, GuideLinkOutdated when its ask was replaced since. One
    answered already is returned (the page shows the answer)."""
    link = read_token(token)
    if link is None:
        raise GuideLinkInvalid()
    assignment = (
        GuideAssignment.objects.select_related("guide", "group__tour")
        .filter(pk=link.assignment_id)
        .first()
    )
    if (
        assignment is None
        or assignment.guide_id != link.guide_id
        or assignment.asked_at != link.asked_at
    ):
        raise GuideLinkOutdated()
    return assignment


def answer(*, token: str, accept: bool) -> GuideAssignment:
    """The guide's answer by their link: the assignment confirmed or declined, once. A link
    answered already (AlreadyAnswered), replaced by a later ask (GuideLinkOutdated) or not the
    museum's (GuideLinkInvalid) changes nothing."""
    link = read_token(token)
    if link is None:
        raise GuideLinkInvalid()
    state = AssignmentState.CONFIRMED if accept else AssignmentState.DECLINED
    now = timezone.now()
    with transaction.atomic():
        # Claim once: only the ask this link was made for, only while unanswered.
        claimed = GuideAssignment.objects.filter(
            pk=link.assignment_id,
            guide_id=link.guide_id,
            asked_at=link.asked_at,
            state=AssignmentState.ASKED,
            answered_at=None,
        ).update(state=state, answered_at=now)
        assignment = assignment_of_link(token)
        if not claimed:
            raise AlreadyAnswered()
        guide = assignment.guide
        record(
            action=Action.CONFIRMED if accept else Action.CHANGED,
            obj=assignment,
            by=guide.user if guide is not None and guide.user_id else None,
            changes={"state": ["asked", state.value]},
        )
    return assignment


# --- Reports -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuideMonth:
    """A guide's tours in a month: led or to lead (confirmed, asked), their hours and fees."""

    guide_id: int
    name: str
    tours: int
    confirmed: int
    asked: int
    hours: Decimal
    fees: Decimal


def tours_by_guide(month: date) -> list[GuideMonth]:
    """Per guide, by name, the tours that start in `month` (the museum's), asked or confirmed:
    one aggregate query."""
    zone = ZoneInfo(settings.TIME_ZONE)
    first = month.replace(day=1)
    following = (first + timedelta(days=32)).replace(day=1)
    rows = (
        GuideAssignment.objects.filter(
            state__in=TAKEN,
            starts__gte=datetime.combine(first, time(), tzinfo=zone),
            starts__lt=datetime.combine(following, time(), tzinfo=zone),
        )
        .values("guide_id", "guide__name")
        .annotate(
            tours=Count("pk"),
            confirmed=Count("pk", filter=Q(state=AssignmentState.CONFIRMED)),
            asked=Count("pk", filter=Q(state=AssignmentState.ASKED)),
            length=Sum(ExpressionWrapper(F("ends") - F("starts"), output_field=DurationField())),
            fees=Sum("fee"),
        )
        .order_by("guide__name", "guide_id")
    )
    return [
        GuideMonth(
            guide_id=row["guide_id"],
            name=row["guide__name"],
            tours=row["tours"],
            confirmed=row["confirmed"],
            asked=row["asked"],
            hours=to_cent(Decimal(row["length"].total_seconds()) / 3600),
            fees=to_cent(row["fees"] or ZERO),
        )
        for row in rows
    ]


def guide_calendar(guide: Guide, *, since: datetime) -> list[GuideAssignment]:
    """The tours the guide is asked for or leads that end after `since`, with their groups (and
    headcounts) and programmes, by time: the guide's calendar page and iCal feed."""
    return list(
        guide.assignments.filter(state__in=TAKEN, ends__gt=since)
        .exclude(group__status__in=GONE)
        .select_related("group__tour")
        .prefetch_related("group__lines")
        .order_by("starts", "pk")
    )
