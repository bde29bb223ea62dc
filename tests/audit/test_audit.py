"""The audit log: who changed what, when, in which request; in the admin; kept for a while."""

import datetime as dt

import time_machine
from django.utils import timezone

from audit.models import ANONYMISED, AuditRecord
from audit.services import purge_old_records
from events.models import SpecialEvent
from orders.services.personal_data import anonymise_old_orders
from tests.conftest import EVENT
from tests.factories import MuseumDayFactory, days_from_today
from tests.orders.conftest import order_body


def price_changes():
    return AuditRecord.objects.filter(object_type="events.specialevent", action="changed")


def test_an_api_price_change_records_who_and_the_request_id(db, staff_client, staff):
    event = staff_client.post("/v1.1/special-events", EVENT, format="json").json()
    answer = staff_client.patch(
        f"/v1.1/special-events/{event['eventId']}",
        {"price": 14},
        format="json",
        HTTP_X_REQUEST_ID="request-42",
    )
    assert answer["X-Request-ID"] == "request-42"

    change = price_changes().get()
    assert (change.actor, change.actor_name, change.request_id) == (staff, "staff", "request-42")
    assert change.object_id == event["eventId"]
    assert change.changes == {"price": ["10.00", "14.00"]}


def test_an_admin_price_change_records_the_staff_member(desk_client):
    from tests.events.test_admin import event_form
    from tests.factories import SpecialEventFactory

    event = SpecialEventFactory(price="12.50")
    form = event_form(event, list(event.dates.all()), price="15.00")
    answer = desk_client.post(f"/admin/events/specialevent/{event.pk}/change/", form)
    assert answer.status_code == 302

    change = price_changes().get()
    assert change.actor_name == "desk" and len(change.request_id) == 32
    assert change.changes == {"price": ["12.50", "15.00"]}
    page = desk_client.get(f"/admin/events/specialevent/{event.pk}/change/")
    assert change.request_id.encode() in page.content  # the history on the object's page


def test_a_sale_a_task_records_as_system_and_personal_data_is_for_superusers(
    db, visitor_client, desk_client, admin_client
):
    day = MuseumDayFactory(date=days_from_today(3))
    visitor_client.post("/v1.1/orders", order_body(day.date), format="json")
    created = AuditRecord.objects.get(object_type="orders.order", action="created")
    assert created.actor_name == "visitor"
    assert created.changes["email"] == "family@example.com"

    page = f"/admin/audit/auditrecord/{created.pk}/change/"
    assert b"family@example.com" not in desk_client.get(page).content
    assert b"family@example.com" in admin_client.get(page).content

    with time_machine.travel(timezone.now() + dt.timedelta(days=40)):
        assert anonymise_old_orders() == 1
    created.refresh_from_db()
    assert created.changes["email"] == ANONYMISED


def test_the_admins_list_filters_by_action(desk_client, db):
    SpecialEvent.objects.all().delete()
    desk_client.post("/v1.1/special-events", EVENT, format="json")
    answer = desk_client.get("/admin/audit/auditrecord/?action__exact=created")
    assert answer.status_code == 200


def test_old_records_go_after_the_retention_period(db, settings, staff_client):
    settings.MUSEUM_AUDIT_RETENTION_DAYS = 400
    staff_client.post("/v1.1/special-events", EVENT, format="json")
    assert purge_old_records() == 0
    with time_machine.travel(timezone.now() + dt.timedelta(days=401)):
        assert purge_old_records() == 1
    assert not AuditRecord.objects.exists()
