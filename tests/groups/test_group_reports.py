"""The groups' arrivals report: per group booked, arrived, no-show, revenue, paid and due, with
totals; in one query however many groups; on its admin page and as CSV."""

import csv
import datetime as dt
import io
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from groups import reports
from groups.services.day import mark_no_show
from orders.models import Order
from tests.factories import door_member, staff_member
from tests.groups.visits import group_visit
from tickets.members import admit

TODAY = dt.date(2030, 6, 12)
NOW = timezone.make_aware(dt.datetime.combine(TODAY, dt.time(17)))


@pytest.fixture(autouse=True)
def at_five(db):
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def june(db):
    """Three groups of June 2030: 27 of 30 came, a no-show, and one paid in part to come."""
    door, desk = door_member(username="door"), staff_member(username="desk")
    came = group_visit(date=TODAY, organisation="Schiller-Gymnasium")
    admit(scanned=came.order.confirmation_code, by=door, people=27)
    absent = group_visit(date=TODAY, lines={"child": 20, "adult": 2}, organisation="Absent")
    mark_no_show(request_id=absent.pk, by=desk)
    to_come = group_visit(
        date=TODAY + dt.timedelta(days=5), lines={"adult": 10}, organisation="Chor e.V."
    )
    Order.objects.filter(pk=to_come.order_id).update(paid=Decimal("40"))
    group_visit(date=dt.date(2030, 7, 1), organisation="July")  # another month
    return came, absent, to_come


def test_the_report_has_each_groups_figures_and_the_totals(june, django_assert_num_queries):
    with django_assert_num_queries(1):
        report = reports.arrivals_report(first=dt.date(2030, 6, 1), last=dt.date(2030, 6, 30))

    assert [
        (line.organisation, line.booked, line.arrived, line.no_show, line.revenue, line.due)
        for line in report.lines
    ] == [
        ("Absent", 22, None, True, Decimal("120"), Decimal("120")),
        ("Schiller-Gymnasium", 30, 27, False, Decimal("165"), Decimal("165")),
        ("Chor e.V.", 10, None, False, Decimal("100"), Decimal("60")),
    ]
    totals = report.totals
    assert (totals["groups"], totals["booked"], totals["arrived"], totals["no_shows"]) == (
        3,
        62,
        27,
        1,
    )
    assert totals["booked_known"] == 52  # the two of today; the one to come is unknown yet
    assert (totals["revenue"], totals["paid"], totals["due"]) == (385, 40, 345)


def test_the_admin_page_and_its_csv(june, admin_client):
    page = admin_client.get(
        "/admin/groups/grouprequest/arrivals/", {"first": "2030-06-01", "last": "2030-06-30"}
    )
    assert page.status_code == 200
    text = page.content.decode()
    assert "Schiller-Gymnasium" in text and "July" not in text

    answer = admin_client.get(
        "/admin/groups/grouprequest/arrivals/",
        {"first": "2030-06-01", "last": "2030-06-30", "format": "csv"},
    )
    assert answer["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(answer.content.decode())))
    schiller = next(row for row in rows if "Schiller-Gymnasium" in row)
    assert schiller[:2] == ["2030-06-12", june[0].code]
    assert schiller[3:] == ["30", "27", "no", "165.00", "0.00", "165.00"]
    absent = next(row for row in rows if "Absent" in row)
    assert absent[3:6] == ["22", "", "yes"]
    total = next(row for row in rows if row and row[0] == "Total")
    assert total[3:6] == ["62", "27", "1"]


def test_the_report_is_staffs_only(june, client):
    client.force_login(door_member(username="door2"))
    assert client.get("/admin/groups/grouprequest/arrivals/").status_code in (302, 403)
