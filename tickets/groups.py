"""Letting a group in by its order's code: one scan admits as many as came (`people`; by default
all still to come), at most its headcount, while its visit is today and approved (the groups'
one answer, groups.services.day.admission_refusal). Its tickets are valid though the invoice is
not paid yet (a group order is confirmed at once); the door checks them in in one statement,
chosen among its valid ones, and the group records how many came, under its row's lock."""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from groups.exceptions import TooManyArriving
from groups.models import GroupRequest
from groups.services import day
from museum import metrics
from museum.exceptions import MuseumProblem
from tickets.exceptions import TicketRefused
from tickets.selectors import Scan
from tickets.services import Admission, check_in_some


@dataclass(frozen=True)
class GroupAdmission:
    """What a group's scan did: the tickets it admitted (`admission`), how many were asked for
    (`people`), and the group as it is now (`group.arrived` of `group.headcount`)."""

    group: GroupRequest
    admission: Admission
    people: int

    @property
    def admitted(self) -> int:
        return len(self.admission.admitted)

    @property
    def headcount(self) -> int:
        return self.group.headcount


def group_of(scan: Scan) -> GroupRequest | None:
    """The group whose order `scan` names by its code, with its order and lines; None for any
    other scan (one query, for an order's code only)."""
    if scan.order_code is None:
        return None
    return (
        GroupRequest.objects.select_related("order")
        .prefetch_related("lines")
        .filter(order__confirmation_code=scan.order_code)
        .first()
    )


def check_in_group(*, group: GroupRequest, by, people: int | None = None) -> GroupAdmission:
    """Admit `people` of the group (by default all still to come) today: refused with the
    group's reason (not approved, cancelled, another day, a no-show, all admitted), or if
    `people` is more than its headcount; past those still to come, only those are admitted."""
    now = timezone.now()
    try:
        with transaction.atomic():
            locked = day.group_for_day(group.pk)
            day.refuse_unless_admissible(locked, today=timezone.localdate(now))
            headcount = locked.headcount
            if people is not None and people > headcount:
                raise TooManyArriving(
                    _("The group booked %(headcount)s: %(people)s is more than that.")
                    % {"headcount": headcount, "people": people},
                    headcount=headcount,
                    left=day.arrivals_left(locked),
                )
            asked = headcount if people is None else people
            coming = min(asked, day.arrivals_left(locked))
            assert locked.order is not None  # an admissible group has its order
            admission = check_in_some(order=locked.order, by=by, people=coming, now=now)
            locked = day.record_arrivals(
                group=locked, arrived=len(admission.admitted), by=by, now=now
            )
    except MuseumProblem as refusal:
        if not isinstance(refusal, TicketRefused):  # check_in_some counted a ticket's
            metrics.CHECK_INS.labels("refused", refusal.code).inc()
        raise
    return GroupAdmission(group=locked, admission=admission, people=asked)
