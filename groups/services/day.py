"""The day of a group's visit: whether the door may admit the group today (one answer, which the
door and the desk both ask), how many came (recorded under the group's row lock, added up over
several scans, never beyond its headcount), and a no-show, marked at the desk.

A no-show keeps its revenue: its order is not cancelled, its invoice stands, and it stays out of
the lists of what is still to pay (groups.reports.owing)."""

from datetime import date, datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.models import Action
from audit.services import record
from groups.exceptions import GroupNotAdmitted, NoShowRefused, TooManyArriving, UnknownGroupRequest
from groups.models import GroupRequest, GroupStatus
from orders.models import OrderStatus

# Why the door may not admit a group today (admission_refusal), each in words.
NOT_APPROVED = "group_not_approved"
CANCELLED = "group_cancelled"
ANOTHER_DAY = "group_another_day"
NO_SHOW = "group_no_show"
ARRIVED_IN_FULL = "group_arrived_in_full"
REFUSALS = {
    NOT_APPROVED: gettext_lazy("The group's request is not approved: it has no visit to admit."),
    CANCELLED: gettext_lazy("The group's visit was cancelled."),
    ANOTHER_DAY: gettext_lazy("The group's visit is on another day."),
    NO_SHOW: gettext_lazy("The group was marked as a no-show."),
    ARRIVED_IN_FULL: gettext_lazy("The whole group has already been admitted."),
}


def admission_refusal(group: GroupRequest, *, today: date) -> str | None:
    """Why the door may not admit `group` today (a key of REFUSALS), or None if it may: the one
    answer to "may this group be admitted today?". Reads its order and lines as loaded."""
    order = group.order
    if group.status == GroupStatus.CANCELLED or (
        order is not None and order.status == OrderStatus.CANCELLED
    ):
        return CANCELLED
    if group.status != GroupStatus.APPROVED or order is None:
        return NOT_APPROVED
    if group.date != today:
        return ANOTHER_DAY
    if group.no_show:
        return NO_SHOW
    if arrivals_left(group) <= 0:
        return ARRIVED_IN_FULL
    return None


def refuse_unless_admissible(group: GroupRequest, *, today: date) -> None:
    """GroupNotAdmitted, with the reason and its words, unless the door may admit `group`."""
    reason = admission_refusal(group, today=today)
    if reason is not None:
        raise GroupNotAdmitted(str(REFUSALS[reason]), reason=reason, group=group.code)


def arrivals_left(group: GroupRequest) -> int:
    """How many of its headcount have not been admitted yet."""
    return max(group.headcount - (group.arrived or 0), 0)


def group_for_day(group_id: int) -> GroupRequest:
    """The group under its row's lock (in the caller's transaction), with its order and lines:
    one scan or no-show of a group at a time."""
    found = (
        GroupRequest.objects.select_for_update(of=("self",))
        .select_related("order")
        .prefetch_related("lines")
        .filter(pk=group_id)
        .first()
    )
    if found is None:
        raise UnknownGroupRequest()
    return found


def record_arrivals(*, group: GroupRequest, arrived: int, by, now: datetime) -> GroupRequest:
    """Record that `arrived` more people of `group` came in: at most those of its headcount not
    yet admitted, under the group's row lock, on its day; added to those of earlier scans, with
    the time the first came (`arrived_at`) and an audit record."""
    with transaction.atomic():
        locked = group_for_day(group.pk)
        refuse_unless_admissible(locked, today=timezone.localdate(now))
        left = arrivals_left(locked)
        if not 1 <= arrived <= left:
            raise TooManyArriving(
                _("The group booked %(headcount)s; %(left)s of them are still to come.")
                % {"headcount": locked.headcount, "left": left},
                headcount=locked.headcount,
                left=left,
            )
        before = locked.arrived or 0
        locked.arrived = before + arrived
        locked.arrived_at = locked.arrived_at or now
        locked.save(update_fields=["arrived", "arrived_at"])
        record(
            action=Action.CHECKED_IN,
            obj=locked,
            by=by,
            changes={"arrived": [before, locked.arrived], "headcount": locked.headcount},
        )
    return locked


def mark_no_show(*, request_id: int, by) -> GroupRequest:
    """Mark an approved group that did not come as a no-show (at the desk): on or after its day,
    while nobody of it has been admitted. Its order stays confirmed (its revenue kept); the door
    refuses it from then on."""
    with transaction.atomic():
        group = group_for_day(request_id)
        if group.status != GroupStatus.APPROVED or group.order is None:
            raise NoShowRefused(_("Only an approved group's visit can be a no-show."))
        if group.order.status == OrderStatus.CANCELLED:
            raise NoShowRefused(_("The group's visit was cancelled."))
        if group.date > timezone.localdate():
            raise NoShowRefused(_("The group's day has not come yet."))
        if group.arrived:
            raise NoShowRefused(
                _("%(arrived)s of the group were admitted: it is not a no-show.")
                % {"arrived": group.arrived},
                arrived=group.arrived,
            )
        if group.no_show:
            return group
        group.no_show, group.arrived = True, None
        group.save(update_fields=["no_show", "arrived"])
        record(action=Action.CHANGED, obj=group, by=by, changes={"no_show": [False, True]})
    return group
