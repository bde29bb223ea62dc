"""A group at the door: its order's code admits as many as arrived in one scan (27 of 30), though
its invoice is unpaid, through admit(), the door page and POST /v1.1/tickets/check-in alike; a
second scan admits only those still to come; more than booked, or another day, is refused."""

import datetime as dt

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.models import Action, AuditRecord
from groups.exceptions import GroupNotAdmitted, TooManyArriving
from groups.models import GroupRequest
from orders.models import Order, Ticket
from tests.conftest import claims
from tests.factories import door_member
from tests.groups.visits import group_visit
from tickets.members import admit

CHECK_IN = "/v1.1/tickets/check-in"
TODAY = dt.date(2030, 6, 12)
NOW = timezone.make_aware(dt.datetime.combine(TODAY, dt.time(10, 5)))


@pytest.fixture(autouse=True)
def at_ten(db):
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def door(db):
    return door_member(username="door")


def admitted(group: GroupRequest) -> int:
    return Ticket.objects.filter(order=group.order, checked_in_at__isnull=False).count()


def test_the_order_code_admits_27_of_30_in_one_scan_though_unpaid(door):
    group = group_visit(date=TODAY)
    assert group.order is not None and not group.order.paid_in_full()

    with CaptureQueriesContext(connection) as queries:
        answer = admit(scanned=group.order.confirmation_code, by=door, people=27)

    assert (answer.admitted, answer.headcount, answer.group.arrived) == (27, 30, 27)
    # One UPDATE for the 27, not one a ticket (and the group's own row's).
    assert len([sql for sql in claims(queries) if '"tickets_ticket"' in sql[:30]]) == 1
    group.refresh_from_db()
    assert (group.arrived, group.arrived_at) == (27, NOW)
    assert admitted(group) == 27
    assert Ticket.objects.filter(order=group.order, checked_in_by=door).count() == 27
    recorded = AuditRecord.objects.get(object_type="groups.grouprequest", object_id=str(group.pk))
    assert recorded.action == Action.CHECKED_IN and recorded.changes["arrived"] == [0, 27]
    assert Order.objects.get(pk=group.order.pk).paid == 0


def test_a_second_scan_of_5_admits_only_the_3_still_to_come(door):
    group = group_visit(date=TODAY)
    admit(scanned=group.order.confirmation_code, by=door, people=27)

    again = admit(scanned=group.order.confirmation_code, by=door, people=5)

    assert (again.admitted, again.people, again.group.arrived) == (3, 5, 30)
    group.refresh_from_db()
    assert group.arrived == 30 and admitted(group) == 30
    with pytest.raises(GroupNotAdmitted) as refused:
        admit(scanned=group.order.confirmation_code, by=door, people=1)
    assert refused.value.code == "group_arrived_in_full"


def test_more_than_the_headcount_is_refused_and_admits_nobody(door):
    group = group_visit(date=TODAY)

    with pytest.raises(TooManyArriving) as refused:
        admit(scanned=group.order.confirmation_code, by=door, people=31)

    assert refused.value.extra == {"headcount": 30, "left": 30}
    group.refresh_from_db()
    assert group.arrived is None and admitted(group) == 0


def test_a_group_of_another_day_is_refused(door):
    group = group_visit(date=TODAY + dt.timedelta(days=1))

    with pytest.raises(GroupNotAdmitted) as refused:
        admit(scanned=group.order.confirmation_code, by=door, people=30)

    assert refused.value.code == "group_another_day"
    assert admitted(group) == 0


def test_a_cancelled_group_order_is_refused(door):
    group = group_visit(date=TODAY)
    Order.objects.filter(pk=group.order_id).update(status="cancelled")

    with pytest.raises(GroupNotAdmitted) as refused:
        admit(scanned=group.order.confirmation_code, by=door)

    assert refused.value.code == "group_cancelled"


def test_the_door_page_asks_how_many_arrived_then_admits_them(client, door):
    client.force_login(door)
    group = group_visit(date=TODAY)
    code = group.order.confirmation_code

    asked = client.post("/door/", {"scanned": code}).content.decode()

    assert 'id="group-question"' in asked and 'value="30"' in asked
    assert "Group: Schiller-Gymnasium, 30 booked. How many arrived?" in asked
    assert admitted(group) == 0  # asked, not admitted yet

    page = client.post("/door/", {"scanned": code, "arrived": "27"}).content.decode()

    assert 'data-admitted="true"' in page
    assert "Group: Schiller-Gymnasium, 27 of 30 admitted" in page
    assert admitted(group) == 27

    asked = client.post("/door/", {"scanned": code}).content.decode()
    assert 'value="3"' in asked and "3 still to come." in asked
    page = client.post("/door/", {"scanned": code, "arrived": "5"}).content.decode()
    assert "Group: Schiller-Gymnasium, 3 more admitted: 30 of 30" in page
    assert "2 more than booked not admitted" in page


def test_the_door_page_refuses_more_than_booked_and_another_day(client, door):
    client.force_login(door)
    group = group_visit(date=TODAY)
    later = group_visit(date=TODAY + dt.timedelta(days=3), organisation="Goethe-Schule")

    page = client.post("/door/", {"scanned": group.order.confirmation_code, "arrived": "31"})
    assert 'data-admitted="false"' in page.content.decode()
    assert "The group booked 30: 31 is more than that." in page.content.decode()

    # Another day's group is not asked how many came: it is refused at once.
    page = client.post("/door/", {"scanned": later.order.confirmation_code}).content.decode()
    assert 'data-admitted="false"' in page and "group-question" not in page
    assert "The group&#x27;s visit is on another day." in page
    assert admitted(group) == admitted(later) == 0


def test_the_api_admits_the_people_asked_for_and_names_the_group(door):
    from tests.conftest import client_for

    api = client_for(door)
    group = group_visit(date=TODAY)

    answer = api.post(CHECK_IN, {"code": group.order.confirmation_code, "people": 27}, "json")

    assert answer.status_code == 200
    body = answer.json()
    assert body["orderCode"] == group.order.confirmation_code and len(body["admitted"]) == 27
    assert body["group"] == {
        "groupCode": group.code,
        "organisation": "Schiller-Gymnasium",
        "headcount": 30,
        "admitted": 27,
        "arrived": 27,
    }
    answer = api.post(CHECK_IN, {"code": group.order.confirmation_code, "people": 31}, "json")
    assert answer.status_code == 409 and answer.json()["reason"] == "more_than_booked"
    # Without a count: all still to come.
    answer = api.post(CHECK_IN, {"code": group.order.confirmation_code}, "json")
    assert answer.status_code == 200 and answer.json()["group"]["admitted"] == 3


def test_the_api_refuses_another_days_group(door):
    from tests.conftest import client_for

    group = group_visit(date=TODAY - dt.timedelta(days=1))

    answer = client_for(door).post(CHECK_IN, {"code": group.order.confirmation_code}, "json")

    assert answer.status_code == 409
    assert answer.json()["reason"] == "group_another_day"


def test_an_approved_groups_order_is_admitted_unpaid_on_its_day(pupil, teacher, group_day, door):
    from groups.services import approval, requests
    from tests.factories import staff_member
    from tests.groups.conftest import school

    asked = requests.request_group(
        account=None, **school(group_day.date, lines={"pupil": 27, "teacher": 3})
    )
    group = approval.approve(request_id=asked.pk, by=staff_member(username="desk"))
    assert group.order is not None and not group.order.paid_in_full()

    on_the_day = timezone.make_aware(dt.datetime.combine(group_day.date, dt.time(9, 30)))
    with time_machine.travel(on_the_day, tick=False):
        answer = admit(scanned=group.order.confirmation_code, by=door, people=27)

    assert (answer.admitted, answer.headcount) == (27, 30)
    assert GroupRequest.objects.get(pk=group.pk).arrived == 27
