"""`group_request.*`: made from the audit records the groups' services write (created,
approved, offered, declined, expired, changed: an offer accepted, the numbers changed), the
request as `GET /v1.1/group-requests/{requestId}` answers it; heard by the receivers of the
account that asked and of staff who answer group requests, no one else's. The audit log words
the same records for staff."""

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from audit.models import AuditRecord
from audit.text import describe
from groups.models import GroupRequest
from groups.services import approval, numbers, requests
from tests.conftest import client_for, run_task_worker
from tests.factories import MuseumDayFactory, UserFactory, staff_member
from tests.groups.conftest import ahead, school
from tests.webhooks.conftest import (
    receivers_allowed,  # noqa: F401
)

pytestmark = [
    pytest.mark.django_db(transaction=True),  # on_commit and the task worker
    pytest.mark.usefixtures("receivers_allowed"),
]
TYPES = [
    "group_request.created",
    "group_request.approved",
    "group_request.offered",
    "group_request.declined",
    "group_request.expired",
    "group_request.changed",
    "group_request.cancelled",
]


def subscribe(client, httpserver, path) -> str:
    answer = client.post(
        "/v1.1/webhooks",
        {"url": httpserver.url_for(path), "eventTypes": TYPES},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    return answer.json()["secret"]


def received(httpserver, path: str, secret: str) -> list[dict]:
    return [
        Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
        for request, _ in httpserver.log
        if request.path == path
    ]


def with_receivers(user, *also: Permission):
    """The account may have webhook subscriptions of its own."""
    user.user_permissions.add(
        Permission.objects.get(codename="manage_own_webhooks", content_type__app_label="webhooks"),
        *also,
    )
    return user


@pytest.fixture
def answerer(db):
    """Staff who answer group requests, with a receiver of their own."""
    answer = Permission.objects.get(
        codename="answer_group_requests", content_type__app_label="groups"
    )
    return with_receivers(staff_member(username="groups-staff"), answer)


def test_each_step_tells_the_asking_account_and_staff_and_no_one_else(
    httpserver, pupil, teacher, chaperones, group_day, answerer
):
    for path in ("/school", "/staff", "/other"):
        httpserver.expect_request(path, method="POST").respond_with_data("ok")
    # A school's own account (not a partner's, whose orders are paid on account).
    school_account = with_receivers(UserFactory(username="school"))
    school_client = client_for(school_account)
    school_secret = subscribe(school_client, httpserver, "/school")
    staff_secret = subscribe(client_for(answerer), httpserver, "/staff")
    subscribe(client_for(with_receivers(UserFactory(username="other"))), httpserver, "/other")
    other_day = MuseumDayFactory(date=ahead(31), capacity=40).date

    body = {
        "organisation": "Schiller-Gymnasium",
        "organisationKind": "school",
        "contactName": "Frau Weber",
        "email": "weber@schiller.example",
        "date": group_day.date.isoformat(),
        "lines": [{"category": "pupil", "quantity": 28}, {"category": "teacher", "quantity": 3}],
    }
    asked = school_client.post("/v1.1/group-requests", body, format="json")
    assert asked.status_code == 201, asked.content
    group_id = asked.json()["id"]
    requests.offer_time(request_id=group_id, by=answerer, date=other_day)
    requests.accept_offer(request_id=group_id)
    approval.approve(request_id=group_id, by=answerer)
    numbers.change_numbers(request_id=group_id, by=answerer, lines={"pupil": 25, "teacher": 3})
    # Another's requests, one declined and one expired: staff hear of them, the school does not.
    declined = requests.request_group(account=None, **school(other_day, lines={"pupil": 4}))
    requests.decline(request_id=declined.pk, by=answerer, reason="Full")
    expired = requests.request_group(
        account=None, **school(other_day, email="x@other.example", lines={"pupil": 2})
    )
    GroupRequest.objects.filter(pk=expired.pk).update(expires_at=timezone.now())
    requests.expire_requests()
    called_off = requests.request_group(
        account=None, **school(other_day, email="y@other.example", lines={"pupil": 3})
    )
    numbers.cancel_group(request_id=called_off.pk, by=answerer, reason="Bus strike")
    run_task_worker()

    school_messages = received(httpserver, "/school", school_secret)
    assert [m["type"] for m in school_messages] == [
        "group_request.created",
        "group_request.offered",
        "group_request.changed",
        "group_request.approved",
        "group_request.changed",
    ]
    assert {m["data"]["id"] for m in school_messages} == {group_id}
    approved = school_messages[3]["data"]
    assert approved["status"] == "approved" and approved["orderCode"].startswith("order-")
    assert school_messages[-1]["data"]["headcount"] == 28  # the request as it is when sent
    staff_messages = received(httpserver, "/staff", staff_secret)
    assert [(m["type"], m["data"]["id"]) for m in staff_messages[5:]] == [
        ("group_request.created", declined.pk),
        ("group_request.declined", declined.pk),
        ("group_request.created", expired.pk),
        ("group_request.expired", expired.pk),
        ("group_request.created", called_off.pk),
        ("group_request.cancelled", called_off.pk),
    ]
    assert {request.path for request, _ in httpserver.log} == {"/school", "/staff"}


def test_the_audit_log_words_a_groups_steps(pupil, teacher, chaperones, group_day, answerer):
    group = requests.request_group(account=None, **school(group_day.date))
    other_day = MuseumDayFactory(date=ahead(31), capacity=40).date
    requests.offer_time(request_id=group.pk, by=answerer, date=other_day)
    requests.accept_offer(request_id=group.pk)
    approval.approve(request_id=group.pk, by=answerer)
    numbers.change_numbers(request_id=group.pk, by=answerer, lines={"pupil": 25, "teacher": 3})
    numbers.cancel_group(request_id=group.pk, by=answerer, reason="Bus strike")

    records = AuditRecord.objects.filter(object_type="groups.grouprequest")
    texts = [change.text for change in describe(records, viewer=answerer, by_step=False)][::-1]

    assert texts[0].startswith("Requested by ") and "31 people" in texts[0]
    assert texts[1].startswith("Another time offered by groups-staff: ")
    assert texts[2] == "The group accepted the time offered"
    assert texts[3] == "Approved by groups-staff: its group order made"
    assert texts[4] == "Numbers changed by groups-staff: from 31 people to 28 people"
    assert texts[-1] == "Cancelled by groups-staff: Bus strike"
