"""The museum in the visitor's language: the API answers in Accept-Language's (saying so in
Content-Language), an order keeps its own, texts missing in a language are read in the museum's,
and the committed catalogues translate every text the code marks."""

import shutil
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.conf import settings
from django.core.management import call_command

from orders.models import Order
from tests.factories import SpecialEventFactory
from tests.orders.conftest import later, order_body

ORDERS = "/v1.1/orders"
LOCALE = Path(settings.BASE_DIR) / "locale"
TRANSLATED = ["de", "fr", "nl", "es"]


def untranslated(po: Path) -> list[str]:
    with po.open("rb") as file:
        catalogue = read_po(file)
    return [m.id for m in catalogue if m.id and (not m.string or m.fuzzy)]


def test_a_french_request_gets_the_categories_in_french(visitor_client):
    answer = visitor_client.get("/v1.1/visitor-categories", headers={"accept-language": "fr-CH"})

    names = {item["category"]: item["name"] for item in answer.json()}
    assert answer["Content-Language"] == "fr"
    assert names["adult"] == "Adulte" and names["child"] == "Enfant (6-17 ans)"


def test_without_accept_language_the_museums_own_language_answers(visitor_client):
    answer = visitor_client.get("/v1.1/visitor-categories")

    assert answer["Content-Language"] == "en-gb"
    assert answer.json()[0]["name"] == "Adult"


def test_a_text_missing_in_a_language_is_read_in_the_museums(visitor_client, staff_client):
    event = SpecialEventFactory(name="Lantern walk", location="Garden", dates=[later()])
    event.name_de = "Laternenumzug"
    event.save()

    german = staff_client.get(f"/v1.1/special-events/{event.pk}", headers={"accept-language": "de"})
    dutch = staff_client.get(f"/v1.1/special-events/{event.pk}", headers={"accept-language": "nl"})

    assert german.json()["name"] == "Laternenumzug" and german.json()["location"] == "Garden"
    assert dutch.json()["name"] == "Lantern walk"


def test_an_event_written_through_the_api_is_the_museums_own_text(staff_client):
    event = SpecialEventFactory(name="Lantern walk", dates=[later()])
    event.name_de = "Laternenumzug"
    event.save()

    staff_client.patch(
        f"/v1.1/special-events/{event.pk}",
        {"name": "Lantern parade"},
        format="json",
        headers={"accept-language": "de"},
    )

    event.refresh_from_db()
    assert (event.name_en, event.name_de) == ("Lantern parade", "Laternenumzug")


def test_a_german_order_keeps_its_language_and_its_problems_speak_german(visitor_client, open_day):
    german = {"accept-language": "de-DE,de;q=0.9"}
    answer = visitor_client.post(
        ORDERS, order_body(open_day.date, ("adult", 1)), format="json", headers=german
    )
    refused = visitor_client.post(
        ORDERS, order_body(open_day.date, ("dragon", 1)), format="json", headers=german
    )

    assert answer.status_code == 201 and answer.json()["language"] == "de"
    assert Order.objects.get(pk=answer.json()["orderId"]).language == "de"
    assert refused.status_code == 400 and refused["Content-Language"] == "de"
    assert refused.json()["title"] == "Ungültige Angaben"
    assert refused.json()["errors"] == {
        "lines.0.category": ["Keine solche Besucherkategorie im Verkauf."]
    }


def test_an_orders_language_is_chosen_apart_from_the_requests(visitor_client, open_day):
    chosen = visitor_client.post(
        ORDERS, order_body(open_day.date, ("adult", 1), language="es"), format="json"
    )
    unknown = visitor_client.post(
        ORDERS, order_body(open_day.date, ("adult", 1), language="pt"), format="json"
    )

    assert chosen.json()["language"] == "es"
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == {
        "language": ["Not one of the museum's languages: en, de, fr, nl, es."]
    }


def test_a_domain_problem_has_its_title_and_detail_in_the_requests_language(visitor_client):
    answer = visitor_client.post(
        ORDERS,
        order_body(later(-1), ("adult", 1)),
        format="json",
        headers={"accept-language": "nl"},
    )

    assert answer.json()["title"] == "Datum in het verleden"
    assert (
        answer.json()["detail"] == "Tickets worden verkocht vanaf vandaag (de dag van het museum)."
    )


def test_staff_switch_the_admin_to_their_language(desk_client):
    desk_client.post("/i18n/setlang/", {"language": "de", "next": "/admin/"})

    page = desk_client.get("/admin/").content.decode()

    assert 'lang="de"' in page and "Sprache wechseln" in page


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_committed_catalogue_translates_every_text(language):
    assert untranslated(LOCALE / language / "LC_MESSAGES" / "django.po") == []


def test_makemessages_finds_no_text_the_catalogues_lack(tmp_path, settings, monkeypatch):
    """The catalogues are up to date with the code: makemessages, run over a copy of the code
    and the catalogues (it writes beside the sources it reads), adds nothing untranslated."""
    for source in ("museum", "events", "hours", "tickets", "orders", "templates"):
        shutil.copytree(Path(settings.BASE_DIR) / source, tmp_path / source)
    shutil.copytree(LOCALE, tmp_path / "locale", ignore=shutil.ignore_patterns("*.mo"))
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(tmp_path)

    call_command("makemessages", locale=TRANSLATED, no_location=True, verbosity=0)

    for language in TRANSLATED:
        assert untranslated(tmp_path / "locale" / language / "LC_MESSAGES" / "django.po") == []
