"""Tiqets' OCTO client (octo-api-client) books with the live server as Tiqets would: it lists
the suppliers, calls the endpoint listed there, and cancels with DELETE."""

import datetime as dt

import pytest
from django.utils import timezone
from octo_client import OctoClient
from octo_client.models import UnitItem

from hours.models import EntrySlot
from octo.keys import issue_api_key
from orders.models import Order, OrderStatus
from tests.factories import MuseumDayFactory, partner_member
from tests.octo.conftest import uid

pytestmark = pytest.mark.django_db(transaction=True)

TIQETS_1 = uid("tiqets-1")


def test_a_journey_with_tiqets_client(live_server):
    day = MuseumDayFactory(
        date=timezone.localdate() + dt.timedelta(days=3), opens_at=dt.time(9), closes_at=dt.time(17)
    )
    EntrySlot.objects.create(day=day, entry_time=dt.time(10), capacity=10)
    _, key = issue_api_key(account=partner_member(username="tiqets"), name="Tiqets")
    client = OctoClient(url=f"{live_server.url}/octo", token=key)

    [supplier] = client.get_suppliers()
    products = client.get_products(supplier.id)
    assert [product.id for product in products] == ["general"]
    [slot] = client.availability_check(
        supplier.id, "general", "DEFAULT", local_date_start=day.date, local_date_end=day.date
    )
    assert slot.vacancies == 10

    held = client.booking_reservation(
        supplier_id=supplier.id,
        uuid=TIQETS_1,
        product_id="general",
        option_id="DEFAULT",
        availability_id=slot.id,
        unit_items=[UnitItem(unitId="adult"), UnitItem(unitId="adult")],
        expiration_minutes=15,
    )
    assert held.status.value == "ON_HOLD"
    extended = client.extend_reservation(supplier.id, TIQETS_1, 30)
    assert extended.utcExpiresAt > held.utcExpiresAt
    confirmed = client.booking_confirmation(
        supplier.id,
        TIQETS_1,
        reseller_reference="TQ-1",
        contact_full_name="Ada Lovelace",
        contact_email_address="ada@example.com",
    )
    assert confirmed.status.value == "CONFIRMED"
    assert [
        item.ticket.deliveryOptions[0].deliveryFormat.value for item in confirmed.unitItems
    ] == [
        "QRCODE",
        "QRCODE",
    ]
    assert client.get_booking(supplier.id, TIQETS_1).supplierReference == (
        Order.objects.get().confirmation_code
    )
    [listed] = client.list_bookings(supplier.id, reseller_reference="TQ-1")
    assert listed.uuid == TIQETS_1

    cancelled = client.booking_cancellation(supplier.id, TIQETS_1, reason="Plans changed")
    assert cancelled.status.value == "CANCELLED"
    assert Order.objects.get().status == OrderStatus.CANCELLED
    assert EntrySlot.objects.get().sold == 0
