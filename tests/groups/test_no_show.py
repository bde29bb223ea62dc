"""A no-show, marked at the desk: refused once anyone of the group came or before its day; the
door refuses the group from then on; its order stays confirmed, so its revenue stays in the
sales report, and it leaves the list of groups that still owe."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from audit.models import Action, AuditRecord
from groups import reports
from groups.exceptions import GroupNotAdmitted, NoShowRefused
from groups.services.day import mark_no_show
from orders.models import Order, OrderStatus
from orders.selectors import sales_report
from tests.factories import door_member, staff_member
from tests.groups.visits import group_visit
from tickets.members import admit

TODAY = dt.date(2030, 6, 12)
NOW = timezone.make_aware(dt.datetime.combine(TODAY, dt.time(16)))


@pytest.fixture(autouse=True)
def at_four(db):
    with time_machine.travel(NOW, tick=False):
        yield


def test_a_no_show_keeps_its_order_and_revenue_and_is_refused_at_the_door(db):
    desk = staff_member(username="desk")
    group = group_visit(date=TODAY)

    mark_no_show(request_id=group.pk, by=desk)

    group.refresh_from_db()
    assert group.no_show and group.arrived is None
    order = Order.objects.get(pk=group.order_id)
    assert order.status == OrderStatus.CONFIRMED and order.total == 165
    record = AuditRecord.objects.get(object_type="groups.grouprequest")
    assert (record.action, record.changes) == (Action.CHANGED, {"no_show": [False, True]})
    with pytest.raises(GroupNotAdmitted) as refused:
        admit(scanned=order.confirmation_code, by=door_member(username="door"), people=1)
    assert refused.value.code == "group_no_show"
    # Its 30 tickets are still sold, their 165 in the sales report.
    report = sales_report(first=TODAY, last=TODAY)
    assert (report.totals["sold"], report.totals["net"]) == (30, 165)


def test_a_no_show_leaves_the_groups_that_owe(db):
    came = group_visit(date=TODAY, organisation="Came")
    absent = group_visit(date=TODAY, organisation="Absent")
    assert {group.organisation for group in reports.owing()} == {"Came", "Absent"}

    mark_no_show(request_id=absent.pk, by=staff_member(username="desk"))

    assert [(group.organisation, group.owed) for group in reports.owing()] == [("Came", 165)]
    assert came.pk != absent.pk


def test_a_group_anyone_of_which_came_is_no_no_show(db):
    group = group_visit(date=TODAY)
    admit(scanned=group.order.confirmation_code, by=door_member(username="door"), people=1)

    with pytest.raises(NoShowRefused) as refused:
        mark_no_show(request_id=group.pk, by=staff_member(username="desk"))

    assert refused.value.extra == {"arrived": 1}
    group.refresh_from_db()
    assert not group.no_show and group.arrived == 1


def test_a_group_whose_day_has_not_come_is_no_no_show(db):
    group = group_visit(date=TODAY + dt.timedelta(days=1))

    with pytest.raises(NoShowRefused):
        mark_no_show(request_id=group.pk, by=staff_member(username="desk"))

    group.refresh_from_db()
    assert not group.no_show
