import datetime as dt
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from hours.models import MuseumDay
from orders.services.sale import buy_ticket
from tests.factories import MuseumDayFactory, UserFactory, partner_member

DAYS = "/admin/hours/museumday/"
APPLY_PATTERN = "/admin/hours/museumday/apply-pattern/"
MONDAY = dt.date(2030, 1, 7)


def close(client, days, **form):
    return client.post(
        DAYS,
        {
            "action": "close_selected_days",
            "_selected_action": [d.isoformat() for d in days],
            **form,
        },
    )


def snapshot():
    return list(
        MuseumDay.objects.values_list(
            "date", "opens_at", "closes_at", "is_closed", "capacity", "edited_by_staff"
        )
    )


def test_closing_days_first_asks_for_a_note_and_changes_nothing(desk_client):
    day = MuseumDayFactory(date=MONDAY)

    page = close(desk_client, [MONDAY])

    assert page.status_code == 200
    assert "Monday 7 January 2030" in page.content.decode()
    assert 'name="note"' in page.content.decode()
    day.refresh_from_db()
    assert not day.is_closed


def test_closing_days_with_a_note_closes_them_as_staff_edits(desk_client):
    MuseumDayFactory(date=MONDAY)
    MuseumDayFactory(date=MONDAY + dt.timedelta(days=1))
    untouched = MuseumDayFactory(date=MONDAY + dt.timedelta(days=2))

    response = close(desk_client, [MONDAY, MONDAY + dt.timedelta(days=1)], apply="1", note="Floods")

    assert response.status_code == 302
    closed = MuseumDay.objects.filter(is_closed=True)
    assert [day.date for day in closed] == [MONDAY, MONDAY + dt.timedelta(days=1)]
    assert {(day.note, day.edited_by_staff) for day in closed} == {("Floods", True)}
    untouched.refresh_from_db()
    assert not untouched.is_closed and not untouched.edited_by_staff


def test_seeding_leaves_a_day_closed_in_the_admin_closed(desk_client):
    call_command("seed_hours", "--start", MONDAY.isoformat(), "--days", "7", stdout=StringIO())
    close(desk_client, [MONDAY], apply="1", note="Public holiday")

    call_command("seed_hours", "--start", MONDAY.isoformat(), "--days", "7", stdout=StringIO())

    day = MuseumDay.objects.get(date=MONDAY)
    assert day.is_closed and day.note == "Public holiday"


def test_closing_without_a_note_is_refused(desk_client):
    day = MuseumDayFactory(date=MONDAY)

    page = close(desk_client, [MONDAY], apply="1", note="")

    assert page.status_code == 200
    assert "This field is required" in page.content.decode()
    day.refresh_from_db()
    assert not day.is_closed


def test_the_close_page_warns_of_tickets_sold_for_those_days(desk_client):
    MuseumDayFactory(date=MONDAY, sold=3)

    page = close(desk_client, [MONDAY]).content.decode()

    assert "3 general-entry tickets are" in page


def apply_pattern(client, **form):
    return client.post(APPLY_PATTERN, {"start": MONDAY.isoformat(), **form})


def test_applying_a_pattern_does_what_seed_hours_does(desk_client):
    MuseumDayFactory(date=MONDAY, opens_at=dt.time(8), closes_at=dt.time(9))
    MuseumDayFactory(date=MONDAY + dt.timedelta(days=2), edited_by_staff=True, opens_at=dt.time(7))
    before = snapshot()
    call_command(
        "seed_hours",
        *["--start", MONDAY.isoformat(), "--days", "14", "--pattern", "tue-sun 10:00-17:00"],
        *["--capacity", "80"],
        stdout=StringIO(),
    )
    seeded = snapshot()
    MuseumDay.objects.all().delete()
    MuseumDay.objects.bulk_create(
        MuseumDay(date=d, opens_at=o, closes_at=c, is_closed=x, capacity=cap, edited_by_staff=staff)
        for d, o, c, x, cap, staff in before
    )

    response = apply_pattern(
        desk_client,
        end=(MONDAY + dt.timedelta(days=13)).isoformat(),
        pattern="tue-sun 10:00-17:00",
        capacity="80",
    )

    assert response.status_code == 302
    assert snapshot() == seeded
    # Both Mondays gone, the staff-edited Wednesday kept as it was.
    assert [day[0].weekday() for day in seeded].count(0) == 0
    assert (MONDAY + dt.timedelta(days=2), dt.time(7)) in [day[:2] for day in seeded]


def test_a_number_of_days_works_like_a_last_day(desk_client):
    response = apply_pattern(desk_client, days="7", pattern="mon-fri 09:00-17:00")
    follow = desk_client.get(response["Location"]).content.decode()

    assert MuseumDay.objects.count() == 5
    assert "5 created, 0 updated, 0 closed with tickets sold, 0 removed, 0 unchanged" in follow


def test_staff_edits_are_reset_only_when_asked(desk_client):
    MuseumDayFactory(date=MONDAY, is_closed=True, note="Holiday", edited_by_staff=True)

    apply_pattern(desk_client, days="1", pattern="mon 09:00-17:00")
    kept = MuseumDay.objects.get(date=MONDAY).is_closed
    apply_pattern(desk_client, days="1", pattern="mon 09:00-17:00", overwrite_staff_edits="on")

    assert kept
    assert not MuseumDay.objects.get(date=MONDAY).is_closed


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"days": "7", "pattern": "every day 9-5"}, "is not like"),
        ({"days": "7", "pattern": "mon 18:00-09:00"}, "closes before it opens"),
        ({"days": "7", "end": "2030-01-20", "pattern": "mon 09:00-17:00"}, "either the last"),
        ({"pattern": "mon 09:00-17:00"}, "either the last"),
        ({"end": "2030-01-01", "pattern": "mon 09:00-17:00"}, "on or after the first"),
    ],
)
def test_a_bad_pattern_form_says_what_is_wrong_and_changes_nothing(desk_client, form, message):
    page = apply_pattern(desk_client, **form)

    assert page.status_code == 200
    assert message in page.content.decode().replace("&#x27;", "'")
    assert not MuseumDay.objects.exists()


def test_the_pattern_action_opens_the_form_on_the_selected_range(desk_client):
    MuseumDayFactory(date=MONDAY)
    MuseumDayFactory(date=MONDAY + dt.timedelta(days=9))

    response = desk_client.post(
        DAYS,
        {
            "action": "apply_pattern_to_selection",
            "_selected_action": [MONDAY.isoformat(), (MONDAY + dt.timedelta(days=9)).isoformat()],
        },
    )
    form = desk_client.get(response["Location"]).content.decode()

    assert response.status_code == 302
    assert 'value="2030-01-07"' in form
    assert 'value="2030-01-16"' in form


def test_staff_without_rights_on_opening_hours_cannot_apply_a_pattern(client, db):
    client.force_login(UserFactory(is_staff=True))

    assert client.get(APPLY_PATTERN).status_code == 403


def test_the_list_reads_like_a_calendar_from_today(desk_client):
    today = timezone.localdate()
    MuseumDayFactory(date=today - dt.timedelta(days=1), note="Yesterday's note")
    MuseumDayFactory(date=today + dt.timedelta(days=1), is_closed=True, note="Staff outing")

    page = desk_client.get(DAYS).content.decode()
    everything = desk_client.get(DAYS, {"when": "all"}).content.decode()

    assert f"{today + dt.timedelta(days=1):%a %d %b %Y}" in page
    assert "Closed" in page and "Staff outing" in page
    assert "Yesterday's note" not in page.replace("&#x27;", "'")
    assert "Yesterday's note" in everything.replace("&#x27;", "'")
    assert "Apply a weekly pattern" in page


def test_drilling_into_a_past_month_shows_that_month(desk_client):
    MuseumDayFactory(date=dt.date(2020, 3, 2), note="Long ago")

    page = desk_client.get(DAYS, {"date__year": "2020", "date__month": "3"}).content.decode()

    assert "Long ago" in page


def test_a_pattern_closing_a_day_with_tickets_says_how_many_and_keeps_the_day(desk_client):
    MuseumDayFactory(date=MONDAY, capacity=3)
    for _ in range(3):
        buy_ticket(
            buyer=partner_member(), ticket_type="general", ticket_date=MONDAY, email="a@b.org"
        )

    response = apply_pattern(desk_client, days="7", pattern="tue-fri 09:00-17:00")
    follow = desk_client.get(response["Location"]).content.decode()

    assert "3 ticket(s) are sold for the 1 day(s) the pattern closes" in follow
    day = MuseumDay.objects.get(date=MONDAY)
    assert (day.is_closed, day.sold, day.tickets.count()) == (True, 3, 3)


def test_deleting_a_day_with_tickets_in_the_admin_is_refused_with_a_page(desk_client, staff):
    MuseumDayFactory(date=MONDAY)
    buy_ticket(buyer=partner_member(), ticket_type="general", ticket_date=MONDAY, email="a@b.org")

    page = desk_client.post(f"{DAYS}{MONDAY.isoformat()}/delete/", {"post": "yes"})
    selected = desk_client.post(
        DAYS,
        {"action": "delete_selected", "_selected_action": [MONDAY.isoformat()], "post": "yes"},
    )

    assert page.status_code == selected.status_code == 200
    assert "Cannot delete museum day" in page.content.decode()
    assert MuseumDay.objects.get(date=MONDAY).sold == 1


def test_editing_a_day_in_the_admin_protects_it_from_seeding(admin_client):
    day = MuseumDayFactory(date=dt.date(2030, 1, 7))

    admin_client.post(
        f"/admin/hours/museumday/{day.date.isoformat()}/change/",
        {"date": "2030-01-07", "opens_at": "12:00", "closes_at": "14:00", "note": "Short day"},
    )

    day.refresh_from_db()
    assert day.edited_by_staff and day.opens_at == dt.time(12)
