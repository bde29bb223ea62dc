"""The group requests' API: any account asks (its places held at once), sees its own and no
other's; staff who answer group requests approve (the order's terms then shown), offer another
time or decline; the owner accepts an offer and changes the numbers; staff who take desk
payments record the group's. Refusals are problem+json."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission

from groups.models import GroupRequest, GroupStatus
from groups.services import requests
from hours.models import MuseumDay
from tests.conftest import assert_problem, client_for
from tests.factories import MuseumDayFactory, UserFactory, staff_member
from tests.groups.conftest import ahead, school

URL = "/v1.1/group-requests"


def body(day, **fields) -> dict:
    return {
        "organisation": "Schiller-Gymnasium",
        "organisationKind": "school",
        "contactName": "Frau Weber",
        "email": "weber@schiller.example",
        "phone": "+49 30 1234567",
        "language": "de",
        "date": day.isoformat(),
        "alternatives": [{"date": ahead(31).isoformat(), "time": None}],
        "lines": [{"category": "pupil", "quantity": 28}, {"category": "teacher", "quantity": 3}],
        "ageGroup": "Klasse 7",
        "accessibility": "One wheelchair",
        "comment": "Two classes",
        **fields,
    }


@pytest.fixture
def answerer(db):
    """Staff who answer group requests and take payments at the desk."""
    user = staff_member(username="groups-staff")
    user.user_permissions.add(
        Permission.objects.get(codename="answer_group_requests", content_type__app_label="groups")
    )
    return user


@pytest.fixture
def answerer_client(answerer):
    return client_for(answerer)


@pytest.fixture
def teacher_account(db):
    return UserFactory(username="weber")


@pytest.fixture
def teacher_client(teacher_account):
    return client_for(teacher_account)


@pytest.fixture
def asked(teacher_client, pupil, teacher, chaperones, group_day) -> dict:
    answer = teacher_client.post(URL, body(group_day.date), format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def test_any_account_asks_and_its_places_are_held_at_once(asked, group_day, teacher_account):
    assert asked["code"].startswith("group-") and asked["status"] == "requested"
    assert asked["lines"] == [
        {"category": "pupil", "quantity": 28},
        {"category": "teacher", "quantity": 3},
    ]
    assert (asked["headcount"], asked["placesHeld"]) == (31, 31)
    assert asked["expiresAt"] and asked["language"] == "de"
    assert asked["alternatives"] == [{"date": ahead(31).isoformat(), "time": None}]
    assert asked["orderCode"] is None and asked["total"] is None and asked["tour"] is None
    # 28 pupils at 6.00, 3 teachers free with them: what approval will invoice.
    assert asked["estimate"] == 168
    assert MuseumDay.objects.get(pk=group_day.pk).sold == 31
    assert GroupRequest.objects.get(pk=asked["id"]).account == teacher_account


def test_a_request_without_room_is_a_409_sold_out(asked, group_day):
    other = client_for(UserFactory(username="other-school"))

    answer = other.post(
        URL,
        body(
            group_day.date, email="b@other.example", lines=[{"category": "pupil", "quantity": 10}]
        ),
        format="json",
    )

    problem = assert_problem(answer, 409)
    assert problem["code"] == "sold_out" and problem["available"] == 9


@pytest.mark.parametrize(
    ("lines", "field"),
    [
        ([], "lines"),
        ([{"category": "pupil", "quantity": 2}, {"category": "pupil", "quantity": 1}], "lines"),
        ([{"category": "pupil", "quantity": "2"}], "lines"),
        ([{"category": "nobody", "quantity": 2}], "lines"),
    ],
)
def test_bad_lines_are_refused(teacher_client, pupil, group_day, lines, field):
    answer = teacher_client.post(URL, body(group_day.date, lines=lines), format="json")

    problem = assert_problem(answer, 400)
    assert any(key.startswith(field) for key in problem["errors"]), problem
    assert not GroupRequest.objects.exists()


def test_an_anonymous_request_is_401(anonymous_client, pupil, group_day):
    assert_problem(anonymous_client.post(URL, body(group_day.date), format="json"), 401)


def test_each_account_lists_its_own_and_staff_all_of_a_status(
    asked, answerer_client, pupil, teacher, group_day, django_assert_max_num_queries
):
    other = client_for(UserFactory(username="other-school"))
    small = body(
        group_day.date, email="c@other.example", lines=[{"category": "pupil", "quantity": 5}]
    )
    mine = other.post(URL, small, format="json").json()
    answerer_client.post(f"{URL}/{mine['id']}/decline", {"reason": "Closed"}, format="json")

    assert [g["id"] for g in other.get(URL).json()] == [mine["id"]]
    with django_assert_max_num_queries(8):
        everyone = answerer_client.get(URL)
    assert [g["id"] for g in everyone.json()] == [mine["id"], asked["id"]]
    assert everyone["X-Total-Count"] == "2"
    declined = answerer_client.get(URL, {"status": "declined"}).json()
    assert [(g["id"], g["status"], g["message"]) for g in declined] == [
        (mine["id"], "declined", "Closed")
    ]
    assert_problem(answerer_client.get(URL, {"status": "lost"}), 400)


def test_anothers_request_is_not_found(asked):
    other = client_for(UserFactory(username="other-school"))

    assert_problem(other.get(f"{URL}/{asked['id']}"), 404)
    assert_problem(
        other.post(
            f"{URL}/{asked['id']}/numbers",
            {"lines": [{"category": "pupil", "quantity": 1}]},
            format="json",
        ),
        404,
    )
    assert_problem(other.post(f"{URL}/{asked['id']}/accept"), 404)


def test_only_staff_who_answer_requests_approve_offer_or_decline(asked, teacher_client, staff):
    for path, payload in [
        ("approve", {}),
        ("offer", {"date": ahead(31).isoformat()}),
        ("decline", {"reason": "No"}),
    ]:
        assert_problem(
            teacher_client.post(f"{URL}/{asked['id']}/{path}", payload, format="json"), 403
        )
    assert GroupRequest.objects.get(pk=asked["id"]).status == GroupStatus.REQUESTED


def test_approval_shows_the_group_order_and_its_invoices_terms(
    asked, answerer_client, teacher_client
):
    answer = answerer_client.post(f"{URL}/{asked['id']}/approve", {}, format="json")

    assert answer.status_code == 200, answer.content
    approved = answer.json()
    group = GroupRequest.objects.select_related("order").get(pk=asked["id"])
    assert approved["status"] == "approved" and approved["placesHeld"] == 0
    assert approved["orderCode"] == group.order.confirmation_code
    assert approved["total"] == approved["due"] == 168  # 28 pupils at 6, 3 teachers free
    assert approved["deposit"] == float(group.deposit) and group.deposit == Decimal("50.40")
    assert approved["depositDue"] == group.deposit_due.isoformat()
    assert approved["balanceDue"] == group.balance_due.isoformat()
    assert approved["finalNumbersDate"] == group.final_numbers_date.isoformat()
    assert (approved["arrived"], approved["noShow"]) == (None, False)
    assert teacher_client.get(f"{URL}/{asked['id']}").json() == approved

    again = answerer_client.post(f"{URL}/{asked['id']}/approve", {}, format="json")
    assert assert_problem(again, 409)["code"] == "group_request_answered"


def test_the_owner_accepts_the_time_offered(asked, answerer_client, teacher_client):
    other_day = ahead(31)
    MuseumDayFactory(date=other_day, capacity=40)
    offered = answerer_client.post(
        f"{URL}/{asked['id']}/offer",
        {"date": other_day.isoformat(), "message": "The 30th is full."},
        format="json",
    )
    assert offered.status_code == 200, offered.content
    assert (offered.json()["status"], offered.json()["date"]) == ("offered", other_day.isoformat())
    assert offered.json()["message"] == "The 30th is full."

    assert_problem(answerer_client.post(f"{URL}/{asked['id']}/accept"), 404)  # not staff's
    accepted = teacher_client.post(f"{URL}/{asked['id']}/accept")
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["status"] == "requested"
    again = teacher_client.post(f"{URL}/{asked['id']}/accept")
    assert assert_problem(again, 409)["code"] == "group_request_answered"


def test_a_decline_needs_a_reason(asked, answerer_client):
    assert_problem(answerer_client.post(f"{URL}/{asked['id']}/decline", {}, format="json"), 400)

    declined = answerer_client.post(
        f"{URL}/{asked['id']}/decline", {"reason": "Closed that week"}, format="json"
    )

    assert declined.status_code == 200
    assert (declined.json()["status"], declined.json()["placesHeld"]) == ("declined", 0)


def test_the_owner_changes_the_numbers_of_its_approved_visit(
    asked, answerer_client, teacher_client
):
    answerer_client.post(f"{URL}/{asked['id']}/approve", {}, format="json")

    changed = teacher_client.post(
        f"{URL}/{asked['id']}/numbers",
        {"lines": [{"category": "pupil", "quantity": 25}, {"category": "teacher", "quantity": 3}]},
        format="json",
    )

    assert changed.status_code == 200, changed.content
    assert changed.json()["headcount"] == 28 and changed.json()["total"] == 150


def test_staff_who_take_desk_payments_record_the_groups(asked, answerer_client, teacher_client):
    answerer_client.post(f"{URL}/{asked['id']}/approve", {}, format="json")
    path = f"{URL}/{asked['id']}/payments"

    assert_problem(teacher_client.post(path, {"amount": 50.4}, format="json"), 403)
    paid = answerer_client.post(path, {"amount": 50.4}, format="json")

    assert paid.status_code == 201, paid.content
    assert (paid.json()["amount"], paid.json()["provider"]) == (50.4, "desk")
    assert answerer_client.get(f"{URL}/{asked['id']}").json()["due"] == 117.6
    assert assert_problem(
        answerer_client.post(f"{URL}/999999/payments", {"amount": 1}, format="json"), 404
    )


def test_a_request_made_by_the_service_reads_alike(pupil, teacher, group_day, answerer_client):
    group = requests.request_group(account=None, **school(group_day.date))

    found = answerer_client.get(f"{URL}/{group.pk}").json()

    assert (found["code"], found["headcount"], found["organisation"]) == (
        group.code,
        31,
        "Schiller-Gymnasium",
    )


def test_the_owner_calls_its_visit_off_and_owes_nothing_before_the_final_date(
    asked, answerer_client, teacher_client, group_day
):
    answerer_client.post(f"{URL}/{asked['id']}/approve", {}, format="json")

    called_off = teacher_client.post(
        f"{URL}/{asked['id']}/cancel", {"reason": "Bus strike"}, format="json"
    )

    assert called_off.status_code == 200, called_off.content
    answer = called_off.json()
    assert (answer["status"], answer["total"], answer["due"]) == ("cancelled", 0, 0)
    assert MuseumDay.objects.get(pk=group_day.pk).sold == 0
    again = teacher_client.post(f"{URL}/{asked['id']}/cancel", {}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "group_request_answered"


def test_another_account_cannot_call_a_visit_off(asked, client):
    stranger = client_for(UserFactory(username="stranger"))

    answer = stranger.post(f"{URL}/{asked['id']}/cancel", {}, format="json")

    assert answer.status_code == 404
    assert GroupRequest.objects.get(pk=asked["id"]).status == "requested"
