"""Guides' faces: the email's confirm and decline links and the page they open (GET shows, POST
answers, once), the guide's calendar and iCal feed, the desk's tours without a guide, the
admin's report per guide and month with its CSV, and the API's tour programmes."""

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission, User
from django.core import mail
from icalendar import Calendar

from groups.guide_links import answer_token
from groups.models import AssignmentState, GuideAssignment
from groups.services import guides
from museum.accounts import create_account
from tests.conftest import assert_problem, client_for, run_task_worker
from tests.factories import PASSWORD
from tests.groups.tour_helpers import make_group, make_guide, make_tour

ANSWER_LINK = re.compile(r"https?://[^/\s]+(/groups/guides/answer/\S+)")


@pytest.fixture
def clerk(db):
    return User.objects.create(username="clerk", is_staff=True)


@pytest.fixture
def tour(db):
    return make_tour()


def links_in(message) -> dict[str, str]:
    """The email's confirm and decline links, as paths."""
    found = ANSWER_LINK.findall(message.body)
    return {path.split("answer=")[1]: path for path in found}


@pytest.mark.django_db(transaction=True)
def test_the_guide_declines_by_the_link_of_their_email(client, clerk, settings):
    settings.MUSEUM_NAME = "Rijksmuseum Test"
    tour, ada = make_tour(), make_guide("Ada")
    first, second = guides.plan_tour(make_group(tour, people=40))
    guides.assign(assignment_id=first.pk, guide_id=ada.pk, by=clerk)
    assert not mail.outbox  # after the commit, by the task queue

    run_task_worker()

    (message,) = mail.outbox
    assert message.to == ["ada@example.com"] and "Highlights" in message.body
    assert message.subject == "Can you lead a tour on Wednesday 12 Jun 2030?"
    links = links_in(message)
    assert set(links) == {"confirm", "decline"}

    shown = client.get(links["decline"])  # a mail scanner's visit changes nothing
    assert shown.status_code == 200
    page = shown.content.decode()
    assert "Decline this tour?" in page and 'id="confirm"' in page and 'id="decline"' in page
    assert "School" in page and "40" in page
    assert GuideAssignment.objects.get(pk=first.pk).state == AssignmentState.ASKED

    declined = client.post(links["decline"], {"answer": "decline"})
    assert declined.status_code == 200 and "Declined" in declined.content.decode()
    assert GuideAssignment.objects.get(pk=first.pk).state == AssignmentState.DECLINED
    assert {a.pk for a in guides.unguided_tours(since=tour_day(first))} == {first.pk, second.pk}

    again = client.post(links["confirm"], {"answer": "confirm"})
    assert again.status_code == 409 and "answered already" in again.content.decode()
    assert GuideAssignment.objects.get(pk=first.pk).state == AssignmentState.DECLINED
    seen = client.get(links["confirm"])
    assert seen.status_code == 200 and 'id="confirm"' not in seen.content.decode()


def tour_day(assignment) -> dt.date:
    return assignment.starts.date()


def test_a_tampered_link_is_refused(client, tour, clerk):
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    token = answer_token(
        guides.assign(assignment_id=assignment.pk, guide_id=make_guide("Ada").pk, by=clerk)
    )
    tampered = token[:-2] + ("xy" if token[-2:] != "xy" else "zz")

    for method in (client.get, client.post):
        answer = method(f"/groups/guides/answer/{tampered}/", {"answer": "confirm"})
        assert answer.status_code == 404 and "not valid" in answer.content.decode()
    assert GuideAssignment.objects.get(pk=assignment.pk).state == AssignmentState.ASKED


def test_asking_again_voids_the_old_link(client, tour, clerk):
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    ada, bob = make_guide("Ada"), make_guide("Bob")
    old = answer_token(guides.assign(assignment_id=assignment.pk, guide_id=ada.pk, by=clerk))
    guides.assign(assignment_id=assignment.pk, guide_id=bob.pk, by=clerk)

    answer = client.post(f"/groups/guides/answer/{old}/", {"answer": "confirm"})

    assert answer.status_code == 409 and "no longer open" in answer.content.decode()
    assert client.get(f"/groups/guides/answer/{old}/").status_code == 409
    asked = GuideAssignment.objects.get(pk=assignment.pk)
    assert (asked.guide, asked.state) == (bob, AssignmentState.ASKED)


def test_a_post_without_a_choice_answers_nothing(client, tour, clerk):
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    token = answer_token(
        guides.assign(assignment_id=assignment.pk, guide_id=make_guide("Ada").pk, by=clerk)
    )

    answer = client.post(f"/groups/guides/answer/{token}/", {"answer": "maybe"})

    assert answer.status_code == 400
    assert GuideAssignment.objects.get(pk=assignment.pk).state == AssignmentState.ASKED


@pytest.mark.django_db(transaction=True)
def test_a_replaced_guide_is_told_they_are_no_longer_needed(clerk):
    tour, ada, bob = make_tour(), make_guide("Ada"), make_guide("Bob")
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    guides.assign(assignment_id=assignment.pk, guide_id=ada.pk, by=clerk)
    guides.assign(assignment_id=assignment.pk, guide_id=bob.pk, by=clerk)

    run_task_worker()

    # Ada's request was replaced before it went: she is told only that she is not needed.
    assert sorted((m.to[0], m.subject.split(":")[0]) for m in mail.outbox) == [
        ("ada@example.com", "Tour on Wednesday 12 Jun 2030, 10"),
        ("bob@example.com", "Can you lead a tour on Wednesday 12 Jun 2030?"),
    ]


# --- The guide's calendar and feed --------------------------------------------------------------


def test_a_guide_sees_their_own_tours_and_the_feed_lists_them(client, tour, clerk):
    ada, bob = make_guide("Ada"), make_guide("Bob")
    ada.user = User.objects.create_user("ada", password=PASSWORD)
    ada.save()
    first, second = guides.plan_tour(make_group(tour, people=40))
    (other,) = guides.plan_tour(make_group(tour, people=20, at="14:00"))
    guides.assign(assignment_id=first.pk, guide_id=ada.pk, by=clerk)
    guides.assign(assignment_id=second.pk, guide_id=bob.pk, by=clerk)
    token = answer_token(guides.assign(assignment_id=other.pk, guide_id=ada.pk, by=clerk))
    guides.answer(token=token, accept=True)
    client.force_login(ada.user)

    page = client.get("/groups/guides/calendar/")

    assert page.status_code == 200
    shown = page.content.decode()
    assert f'id="tour-{first.pk}"' in shown and f'id="tour-{other.pk}"' in shown
    assert f'id="tour-{second.pk}"' not in shown  # Bob's
    assert f"/groups/guides/{ada.feed_token}.ics" in shown

    feed = client.get(f"/groups/guides/{ada.feed_token}.ics")
    assert feed.status_code == 200 and feed["Content-Type"] == "text/calendar; charset=utf-8"
    events = Calendar.from_ical(feed.content).walk("VEVENT")
    assert [(str(e["status"]), e.decoded("dtstart")) for e in events] == [
        ("TENTATIVE", first.starts),
        ("CONFIRMED", other.starts),
    ]
    assert all(str(e["summary"]).startswith("Highlights: School") for e in events)
    assert client.get("/groups/guides/not-the-secret.ics").status_code == 404


def test_the_calendar_is_for_guides_only(client, db):
    assert client.get("/groups/guides/calendar/").status_code == 302  # to sign in
    client.force_login(User.objects.create_user("visitor", password=PASSWORD))
    assert client.get("/groups/guides/calendar/").status_code == 403


# --- The desk -----------------------------------------------------------------------------------


@pytest.fixture
def desk_clerk(client, db):
    client.force_login(create_account(username="desk1", password=PASSWORD, desk=True))
    return client


def test_the_desk_lists_tours_without_a_guide_and_asks_a_free_one(
    desk_clerk, tour, django_assert_max_num_queries
):
    ada = make_guide("Ada")
    make_guide("Bob", languages=["de"])
    first, second = guides.plan_tour(make_group(tour, people=40))
    for hour in range(11, 16):
        guides.plan_tour(make_group(tour, people=20, at=f"{hour:02}:00"))

    with django_assert_max_num_queries(14):
        page = desk_clerk.get("/desk/guides/")

    shown = page.content.decode()
    assert page.status_code == 200 and f'id="assignment-{first.pk}"' in shown
    assert f'<option value="{ada.pk}">Ada</option>' in shown and "Bob" not in shown

    asked = desk_clerk.post("/desk/guides/", {"assignment": first.pk, "guide": ada.pk})
    assert asked.status_code == 302
    assert GuideAssignment.objects.get(pk=first.pk).guide == ada

    refused = desk_clerk.post(
        "/desk/guides/", {"assignment": second.pk, "guide": ada.pk}, follow=True
    )
    assert "leads another tour at this time" in refused.content.decode()
    shown = desk_clerk.get("/desk/guides/").content.decode()
    assert f'id="assignment-{first.pk}"' not in shown and f'id="assignment-{second.pk}"' in shown


def test_asking_a_guide_at_the_desk_needs_the_permission_to_answer_groups(client, tour):
    seller = User.objects.create_user("seller", password=PASSWORD, is_staff=True)
    seller.user_permissions.add(Permission.objects.get(codename="sell_at_desk"))
    client.force_login(seller)
    (assignment,) = guides.plan_tour(make_group(tour, people=20))
    ada = make_guide("Ada")

    assert client.get("/desk/guides/").status_code == 200
    assert (
        client.post("/desk/guides/", {"assignment": assignment.pk, "guide": ada.pk}).status_code
        == 403
    )
    assert GuideAssignment.objects.get(pk=assignment.pk).guide is None


# --- The admin's report -------------------------------------------------------------------------


def test_staff_see_the_report_per_guide_and_month_with_its_csv(desk_client, tour, clerk):
    ada = make_guide("Ada")
    first, second = guides.plan_tour(make_group(tour, people=40))
    guides.answer(
        token=answer_token(guides.assign(assignment_id=first.pk, guide_id=ada.pk, by=clerk)),
        accept=True,
    )

    page = desk_client.get("/admin/groups/guideassignment/report/?month=2030-06")
    csv = desk_client.get("/admin/groups/guideassignment/report/?month=2030-06&format=csv")

    assert page.status_code == 200 and "June 2030" in page.content.decode()
    assert csv["Content-Type"] == "text/csv; charset=utf-8"
    lines = csv.content.decode().splitlines()
    assert lines[1:] == ["Ada,1,1,0,1.00,45.00", "Total,1,1,0,1.00,45.00"]
    assert desk_client.get("/admin/groups/guideassignment/").status_code == 200
    assert desk_client.get(f"/admin/groups/guide/{ada.pk}/change/").status_code == 200


def test_staff_make_a_guide_in_the_admin_with_their_hours(desk_client, db):
    answer = desk_client.post(
        "/admin/groups/guide/add/",
        {
            "name": "Ada",
            "email": "ada@example.com",
            "languages": ["en", "de"],
            "audiences": ["school"],
            "active": "on",
            "availability-TOTAL_FORMS": "1",
            "availability-INITIAL_FORMS": "0",
            "availability-0-weekday": "2",
            "availability-0-starts": "09:00",
            "availability-0-ends": "17:00",
            "exceptions-TOTAL_FORMS": "0",
            "exceptions-INITIAL_FORMS": "0",
        },
    )

    assert answer.status_code == 302, answer.content.decode()[:3000]
    (guide,) = guides.free_guides(
        starts=dt.datetime(2030, 6, 12, 10, tzinfo=dt.UTC),
        ends=dt.datetime(2030, 6, 12, 11, tzinfo=dt.UTC),
        language="de",
        audience="school",
    )
    assert guide.name == "Ada" and guide.languages == ["en", "de"]


# --- The API ------------------------------------------------------------------------------------


def test_any_account_lists_the_active_tour_programmes(visitor, anonymous_client):
    make_tour(name="Old masters", fee=Decimal("60"), fee_per="guide", languages=["nl"])
    make_tour(name="Retired", active=False)

    answer = client_for(visitor).get("/v1.1/tour-programmes")

    assert answer.status_code == 200
    (programme,) = answer.json()
    assert programme == {
        "id": programme["id"],
        "name": "Old masters",
        "description": "",
        "durationMinutes": 60,
        "languages": ["nl"],
        "audiences": ["school", "company"],
        "maxPeoplePerGuide": 25,
        "fee": 60,
        "feePer": "guide",
        "currency": "EUR",
    }
    assert_problem(anonymous_client.get("/v1.1/tour-programmes"), 401)
    assert client_for(visitor).get("/v1.1/tour-programmes?page=2").status_code == 400
