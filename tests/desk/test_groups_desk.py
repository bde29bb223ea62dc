"""The desk's groups: the queue of requests waiting (oldest first, with expiry and places held),
a request answered through its page (approve, offer another time, decline) by the groups'
services, their refusals shown as the form's errors; the visits from today with what each owes;
a payment, the numbers and a no-show per group; each step behind its permission."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.contrib.auth.models import Permission
from django.utils import timezone

from groups.models import GroupRequest, GroupStatus
from groups.services import approval, requests
from museum.accounts import create_account
from tests.factories import PASSWORD, MuseumDayFactory, door_member


def ahead(days: int) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


def ask(day: dt.date, organisation: str = "Schiller-Gymnasium", **fields) -> GroupRequest:
    return requests.request_group(
        account=None,
        organisation=organisation,
        organisation_kind="school",
        contact_name="Frau Weber",
        email=f"office@{organisation.lower()}.example",
        date=day,
        lines=fields.pop("lines", {"child": 20, "adult": 2}),
        language="de",
        **fields,
    )


@pytest.fixture
def day(db):
    return MuseumDayFactory(date=ahead(30), capacity=100)


def desk_account(username: str = "desk", *, answers: bool = True):
    """A desk role's account (which answers group requests), or one that only sells."""
    if answers:
        return create_account(username=username, password=PASSWORD, desk=True)
    user = create_account(username=username, password=PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename="sell_at_desk"))
    return user


@pytest.fixture
def desk(client, db):
    client.force_login(desk_account())
    return client


def test_the_queue_lists_waiting_requests_oldest_first_with_expiry_and_places(desk, day):
    first = ask(day.date, "Erste")
    second = ask(day.date, "Zweite", lines={"adult": 5})
    declined = ask(day.date, "Dritte")
    requests.decline(request_id=declined.pk, by=desk_account("other"), reason="Full")

    page = desk.get("/desk/groups/").content.decode()

    queue = page.split('id="group-queue"')[1].split("</table>")[0]
    assert queue.index(first.code) < queue.index(second.code)
    assert declined.code not in queue
    assert "<td>22</td>" in queue and "<td>5</td>" in queue  # people, and places held


def test_approving_at_the_desk_makes_the_group_order(desk, day):
    group = ask(day.date)

    answer = desk.post(f"/desk/groups/{group.pk}/approve", {})

    assert answer.status_code == 302 and answer.url == f"/desk/groups/{group.pk}/"
    group.refresh_from_db()
    assert group.status == GroupStatus.APPROVED and group.order is not None
    page = desk.get(answer.url).content.decode()
    assert "Approved: group order" in page and group.order.confirmation_code in page
    visits = desk.get("/desk/groups/").content.decode().split('id="group-visits"')[1]
    assert group.code in visits and f"{group.order.total:.2f}" in visits  # all of it due


def test_declining_needs_a_reason_and_keeps_it(desk, day):
    group = ask(day.date)

    refused = desk.post(f"/desk/groups/{group.pk}/decline", {"reason": ""})
    assert (
        refused.status_code == 400 and GroupRequest.objects.get(pk=group.pk).status == "requested"
    )

    answer = desk.post(f"/desk/groups/{group.pk}/decline", {"reason": "Closed for works"})

    assert answer.status_code == 302
    group.refresh_from_db()
    assert (group.status, group.message) == (GroupStatus.DECLINED, "Closed for works")


def test_offering_another_time(desk, day):
    other = MuseumDayFactory(date=ahead(31), capacity=100)
    group = ask(day.date)

    answer = desk.post(
        f"/desk/groups/{group.pk}/offer",
        {"date": other.date.isoformat(), "message": "Thursday is free"},
    )

    assert answer.status_code == 302
    group.refresh_from_db()
    assert (group.status, group.date) == (GroupStatus.OFFERED, other.date)


def test_a_refusal_of_the_services_shows_as_the_forms_error(desk, day):
    group = ask(day.date)
    requests.decline(request_id=group.pk, by=desk_account("other"), reason="Full")

    page = desk.post(f"/desk/groups/{group.pk}/approve", {})

    assert page.status_code == 400
    assert "errorlist" in page.content.decode()
    assert GroupRequest.objects.get(pk=group.pk).status == GroupStatus.DECLINED


def test_answering_needs_its_permission(client, day):
    client.force_login(desk_account("seller", answers=False))
    group = ask(day.date)

    assert client.get(f"/desk/groups/{group.pk}/").status_code == 200
    assert client.post(f"/desk/groups/{group.pk}/approve", {}).status_code == 403
    assert GroupRequest.objects.get(pk=group.pk).status == GroupStatus.REQUESTED


def test_door_staff_do_not_see_the_groups(client, day):
    client.force_login(door_member(username="door"))
    assert client.get("/desk/groups/").status_code == 403


def test_a_bank_transfer_is_recorded_and_the_numbers_changed(desk, day):
    group = approval.approve(request_id=ask(day.date).pk, by=desk_account("other"))

    answer = desk.post(
        f"/desk/groups/{group.pk}/payment", {"amount": "50.00", "method": "bank_transfer"}
    )

    assert answer.status_code == 302
    group.order.refresh_from_db()
    assert group.order.paid == Decimal("50.00")
    answer = desk.post(f"/desk/groups/{group.pk}/numbers", {"qty_child": "24", "qty_adult": "2"})
    assert answer.status_code == 302
    assert GroupRequest.objects.get(pk=group.pk).headcount == 26


def test_a_no_show_is_marked_on_its_day_not_before(desk, day):
    group = approval.approve(request_id=ask(day.date).pk, by=desk_account("other"))

    early = desk.post(f"/desk/groups/{group.pk}/no-show")
    assert early.status_code == 400 and "has not come yet" in early.content.decode()

    with time_machine.travel(timezone.make_aware(dt.datetime.combine(day.date, dt.time(17)))):
        desk.force_login(desk_account("evening"))  # a new session, on the day
        answer = desk.post(f"/desk/groups/{group.pk}/no-show")
        assert answer.status_code == 302
        page = desk.get(answer.url).content.decode()

    assert GroupRequest.objects.get(pk=group.pk).no_show
    assert "No-show" in page and "The group was marked as a no-show." in page


def test_the_desk_calls_a_visit_off_and_a_paid_one_is_refused_until_refunded(desk, day):
    paid = approval.approve(request_id=ask(day.date).pk, by=desk_account("other"))
    desk.post(f"/desk/groups/{paid.pk}/payment", {"amount": "10.00", "method": "cash"})

    refused = desk.post(f"/desk/groups/{paid.pk}/cancel", {"reason": "Bus strike"})

    assert refused.status_code == 400 and "refund the difference first" in refused.content.decode()
    assert GroupRequest.objects.get(pk=paid.pk).status == GroupStatus.APPROVED
    waiting = ask(day.date, "Andere", lines={"adult": 5})
    answer = desk.post(f"/desk/groups/{waiting.pk}/cancel", {"reason": ""})
    assert answer.status_code == 302
    assert GroupRequest.objects.get(pk=waiting.pk).status == GroupStatus.CANCELLED
