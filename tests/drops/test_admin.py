"""Drops in the admin: staff set one up with Django's forms (its line's settings written to Redis
once saved), are warned of an outflow above what the server was measured to sell, and read its
waiting list."""

import datetime as dt

import pytest
from django.contrib.messages import get_messages
from django.utils import timezone

from drops.models import Drop, WaitingEntry
from hours.models import EntrySlot
from tests.drops.conftest import make_drop
from tests.factories import UserFactory

ADMIN = "/admin/drops/drop/"


def form_data(day, **fields) -> dict:
    opens = timezone.localtime() + dt.timedelta(days=1)
    moments = {
        "prequeue_opens_at": opens - dt.timedelta(minutes=30),
        "opens_at": opens,
        "closes_at": opens + dt.timedelta(hours=6),
    }
    split = {
        f"{name}_{part}": value
        for name, moment in moments.items()
        for part, value in enumerate([moment.strftime("%Y-%m-%d"), moment.strftime("%H:%M:%S")])
    }
    return {
        "name": "Vermeer",
        "days": [day.pk],
        "slots": [],
        "event_dates": [],
        **split,
        "max_tickets": "4",
        "admission_minutes": "10",
        "octo_allocation": "0",
        "seed": "",
        "waiting_list-TOTAL_FORMS": "0",
        "waiting_list-INITIAL_FORMS": "0",
        **fields,
    }


def messages_of(answer) -> list[str]:
    return [str(message) for message in get_messages(answer.wsgi_request)]


@pytest.mark.parametrize(("outflow", "warned"), [(1800, False), (1801, True)])
def test_staff_add_a_drop_and_are_warned_of_an_outflow_above_the_measured(
    desk_client, drop_day, settings, outflow, warned
):
    assert settings.MUSEUM_DROP_OUTFLOW_WARNING == 1800
    answer = desk_client.post(
        f"{ADMIN}add/", form_data(drop_day, outflow_per_minute=str(outflow)), follow=True
    )

    assert answer.status_code == 200
    drop = Drop.objects.get()
    assert drop.outflow_per_minute == outflow and list(drop.days.all()) == [drop_day]
    warnings = [text for text in messages_of(answer) if "MUSEUM_DROP_OUTFLOW_WARNING" in text]
    assert bool(warnings) == warned
    if warned:
        assert "may then not keep up" in warnings[0] and "make bench" in warnings[0]


def test_the_form_offers_the_rows_to_come_and_those_the_drop_covers(desk_client, drop_day):
    past = EntrySlot.objects.create(
        day=type(drop_day).objects.create(
            date=timezone.localdate() - dt.timedelta(days=2),
            opens_at=dt.time(10),
            closes_at=dt.time(17),
        ),
        entry_time=dt.time(10),
    )
    drop = make_drop(drop_day)
    drop.slots.add(past)

    fresh = desk_client.get(f"{ADMIN}add/").context["adminform"].form
    kept = desk_client.get(f"{ADMIN}{drop.pk}/change/").context["adminform"].form

    assert past not in fresh.fields["slots"].queryset
    assert set(drop_day.slots.all()) <= set(fresh.fields["slots"].queryset)
    assert past in kept.fields["slots"].queryset


def test_the_list_shows_each_drops_stage_and_its_waiting_list_is_only_read(desk_client, drop_day):
    drop = make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    person = UserFactory(username="late")
    WaitingEntry.objects.create(
        drop=drop, account=person, email=person.email, language="en", quantity=2
    )

    listed = desk_client.get(ADMIN)
    page = desk_client.get(f"{ADMIN}{drop.pk}/change/")

    assert listed.status_code == 200 and "on sale" in listed.content.decode()
    assert page.status_code == 200 and person.email in page.content.decode()
    assert not page.context["inline_admin_formsets"][0].has_add_permission
