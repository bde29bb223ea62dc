"""The museum in the visitor's language: the API answers in Accept-Language's (saying so in
Content-Language), an order keeps its own (its PDF and ticket images speak it), texts missing in
a language are read in the museum's, the door speaks its staff's, and the committed catalogues
translate every text the code marks."""

import datetime as dt
import shutil
from decimal import Decimal
from io import BytesIO
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.conf import settings
from django.core import mail
from django.core.management import call_command
from django.utils import timezone
from PIL import Image

from orders.models import Order, TicketImage
from orders.notifications import send_not_placed
from orders.services.sale import place_order
from tests.factories import MuseumDayFactory, SpecialEventFactory, partner_member
from tests.orders.conftest import later, order_body
from tests.orders.test_tickets_pdf import NEEDS_POPPLER, pdf_text
from tickets.images import ticket_image

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


@NEEDS_POPPLER
def test_a_german_orders_pdf_is_german_whatever_the_request_asks(visitor_client):
    day = MuseumDayFactory(date=dt.date(2030, 6, 12), opens_at=dt.time(10), closes_at=dt.time(17))
    day.slots.create(entry_time=dt.time(10, 30), capacity=10)
    body = order_body(day.date, ("adult", 2), entryTime="10:30", language="de")
    order = Order.objects.get(pk=visitor_client.post(ORDERS, body, format="json").json()["orderId"])
    url = f"{ORDERS}/{order.pk}/tickets.pdf"

    german = visitor_client.get(url, headers={"accept-language": "fr"})
    order.language = "en"
    order.save(update_fields=["language"])
    english = visitor_client.get(url, headers={"accept-language": "de"})

    text = pdf_text(german.content)
    assert "Ticket 1 von 2 · Bestellung" in text and "Allgemeiner Eintritt" in text
    assert "Mittwoch, 12. Juni 2030" in text and "Einlass ab 10:30" in text
    assert "Erwachsener · 15,00" in text and "Stornierung: Bis Dienstag, 11. Juni 2030" in text
    # Kept as German: another language is another PDF, with its own version.
    assert english["ETag"] != german["ETag"]
    assert "Ticket 1 of 2 · Order" in pdf_text(english.content)


def test_a_french_ticket_image_is_drawn_in_french(db):
    MuseumDayFactory(date=later())
    order = place_order(
        buyer=partner_member(),
        email="amelie@example.com",
        ticket_type="general",
        ticket_date=later(),
        lines=[{"category": "adult", "quantity": 1}],
        language="fr",
    )
    [ticket] = order.sold_tickets
    french = bytes(ticket_image(ticket=ticket).png)
    TicketImage.objects.filter(ticket=ticket).delete()
    Order.objects.filter(pk=order.pk).update(language="en")
    ticket.refresh_from_db()

    english = bytes(ticket_image(ticket=ticket).png)

    assert Image.open(BytesIO(french)).format == "PNG"
    assert french != english  # its words and date in the order's language


def test_a_payment_too_late_is_told_in_the_orders_language(db):
    MuseumDayFactory(date=dt.date(2030, 6, 12))
    order = place_order(
        buyer=partner_member(),
        email="lucia@example.com",
        ticket_type="general",
        ticket_date=dt.date(2030, 6, 12),
        lines=[{"category": "adult", "quantity": 2}],
        language="es",
    )

    send_not_placed(order=order, amount=Decimal("30.00"))

    [message] = mail.outbox
    assert message.subject == f"Su pedido {order.confirmation_code} no se ha podido mantener"
    assert "(miércoles, 12 de junio de 2030)" in message.body
    assert "Le devolvemos 30,00\xa0€" in message.body


def test_the_door_speaks_its_staff_members_language(desk_client):
    MuseumDayFactory(date=timezone.localdate())
    desk_client.post("/i18n/setlang/", {"language": "de", "next": "/door/"})

    page = desk_client.post("/door/", {"scanned": "no-such-code"}).content.decode()

    assert '<html lang="de">' in page and ">KEIN EINLASS<" in page
    assert "Unbekannter Code: Kein Ticket und keine Bestellung hat diesen Code" in page


def test_staff_switch_the_admin_to_their_language(desk_client):
    desk_client.post("/i18n/setlang/", {"language": "de", "next": "/admin/"})

    page = desk_client.get("/admin/").content.decode()

    assert 'lang="de"' in page and "Sprache wechseln" in page


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_committed_catalogue_translates_every_text(language):
    assert untranslated(LOCALE / language / "LC_MESSAGES" / "django.po") == []


@pytest.mark.needs_tool("xgettext", "msgmerge")  # GNU gettext's, which makemessages runs
def test_makemessages_finds_no_text_the_catalogues_lack(tmp_path, settings, monkeypatch):
    """The catalogues are up to date with the code: makemessages, run over a copy of the code
    and the catalogues (it writes beside the sources it reads), adds nothing untranslated."""
    for source in (
        "museum",
        "audit",
        "events",
        "hours",
        "tickets",
        "orders",
        "giftcards",
        "vouchers",
        "groups",
        "drops",
        "wallet",
        "desk",
        "templates",
    ):
        shutil.copytree(Path(settings.BASE_DIR) / source, tmp_path / source)
    shutil.copytree(LOCALE, tmp_path / "locale", ignore=shutil.ignore_patterns("*.mo"))
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(tmp_path)

    call_command("makemessages", locale=TRANSLATED, no_location=True, verbosity=0)

    for language in TRANSLATED:
        assert untranslated(tmp_path / "locale" / language / "LC_MESSAGES" / "django.po") == []
