"""The public form at /groups/: no account, in the visitor's language among the museum's five,
behind CSRF; a request sent through it holds its places like the API's, shows its code and what
happens next, and is mailed; refusals and bad input show on the form; each address sends at
most MUSEUM_THROTTLE_GROUP_REQUEST_RATE requests."""

import re

import pytest
from django.test import Client
from django.utils.translation import gettext as _

from groups.models import GroupEmail, GroupRequest, GroupStatus
from hours.models import MuseumDay
from museum import i18n
from museum.i18n import day_in_words
from tests.groups.conftest import ahead

URL = "/groups/"


def form(day, **fields) -> dict:
    return {
        "language": "de",
        "organisation": "Schiller-Gymnasium",
        "organisation_kind": "school",
        "contact_name": "Frau Weber",
        "email": "weber@schiller.example",
        "phone": "030 1234567",
        "date": day.isoformat(),
        "entry_time": "",
        "alternative_date": ahead(31).isoformat(),
        "alternative_time": "10:30",
        "people_pupil": "28",
        "people_teacher": "3",
        "age_group": "Klasse 7",
        "tour": "",
        "accessibility": "",
        "comment": "",
        "address": "Schillerstr. 1, Berlin",
        "vat_id": "",
        **fields,
    }


def html_lang(response) -> str:
    return re.search(r'<html lang="([a-z-]+)"', response.content.decode()).group(1)


@pytest.fixture
def form_day(pupil, teacher, chaperones, group_day):
    return group_day.date


def test_the_form_speaks_the_language_asked_for_among_the_museums(client, form_day):
    assert html_lang(client.get(URL, {"lang": "de"})) == "de"
    assert html_lang(client.get(URL, HTTP_ACCEPT_LANGUAGE="fr")) == "fr"
    assert html_lang(client.get(URL, {"lang": "xx"}, HTTP_ACCEPT_LANGUAGE="nl")) == "nl"
    page = client.get(URL).content.decode()
    for code in ("de", "fr", "nl", "es"):
        assert f'href="?lang={code}"' in page
    assert 'name="people_pupil"' in page and 'name="people_teacher"' in page
    assert 'name="people_member"' not in page
    assert 'name="csrfmiddlewaretoken"' in page


def test_a_request_through_the_form_holds_its_places_and_shows_its_code(client, form_day):
    answer = client.post(URL, form(form_day))

    assert answer.status_code == 201, answer.content.decode()
    group = GroupRequest.objects.get()
    assert (group.account, group.status, group.language) == (None, GroupStatus.REQUESTED, "de")
    assert group.headcount == 31 and group.address == "Schillerstr. 1, Berlin"
    assert group.alternatives == [{"date": ahead(31).isoformat(), "time": "10:30"}]
    assert MuseumDay.objects.get(date=form_day).sold == 31
    page = answer.content.decode()
    assert html_lang(answer) == "de" and group.code in page
    with i18n.speaking("de"):
        assert day_in_words(form_day) in page  # "Dienstag 29. Dezember 2026"
    assert f"Vielen Dank: Wir haben Ihre Anfrage {group.code} erhalten." in page
    assert GroupEmail.objects.filter(group=group, kind="received").exists()


def test_bad_input_shows_on_the_form_and_makes_nothing(client, form_day):
    answer = client.post(URL, form(form_day, people_pupil="", people_teacher="0", email="nope"))

    assert answer.status_code == 400
    page = answer.content.decode()
    with i18n.speaking("de"):
        assert _("Say how many people come.") in page
        assert _("Enter a valid email address.") in page  # Django's, in German
    assert not GroupRequest.objects.exists()


def test_a_request_without_room_is_refused_on_the_form(client, form_day):
    answer = client.post(URL, form(form_day, people_pupil="40"))

    assert answer.status_code == 409
    assert 'id="outcome"' in answer.content.decode()
    assert not GroupRequest.objects.exists() and MuseumDay.objects.get(date=form_day).sold == 0


def test_the_form_needs_its_csrf_token(form_day):
    answer = Client(enforce_csrf_checks=True).post(URL, form(form_day))

    assert answer.status_code == 403 and not GroupRequest.objects.exists()


def test_an_address_sends_at_most_its_rate_of_requests(client, form_day, settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**rates, "group_request": "2/hour"},
    }
    small = {"people_pupil": "2", "people_teacher": ""}

    answers = [
        client.post(URL, form(form_day, email=f"a{n}@school.example", **small)) for n in range(3)
    ]

    assert [answer.status_code for answer in answers] == [201, 201, 429]
    assert GroupRequest.objects.count() == 2
    assert client.get(URL).status_code == 200  # reading the form is not counted
