"""Every face that prints, draws, sends or admits an order's tickets answers the same orders
alike: the API's PDF and image, the desk's print, order page and resend, the ticket's page in the
admin, and the door. An order never paid (held, its hold run out before or after it is released)
has no tickets anywhere, `not_paid`; a paid one prints everywhere and comes in; a paid order
cancelled later prints stamped CANCELLED, and the door refuses it."""

import datetime as dt
import re
from decimal import Decimal

import pytest
import time_machine
from django.contrib.messages import get_messages
from django.utils import timezone
from django.utils.html import escape

from museum.i18n import money
from orders.models import Order, OrderStatus, Ticket, TicketState
from orders.providers import DESK
from orders.services.cancellation import cancel_order
from orders.services.holds import release_expired_holds
from orders.services.payments import start_payment
from orders.services.sale import place_order
from tests.factories import MuseumDayFactory, UserFactory, staff_member
from tickets.services import check_in

TODAY = dt.date(2030, 6, 12)
NOW = timezone.make_aware(dt.datetime.combine(TODAY, dt.time(11)))
BEFORE_ITS_HOLD_RAN_OUT = NOW - dt.timedelta(hours=1)


@pytest.fixture(autouse=True)
def open_today(db):
    MuseumDayFactory(date=TODAY)


@pytest.fixture
def desk_client(client, db):
    """A browser session of a member of the Museum staff group, signed in on the museum's today
    (a session from the real today would have expired by then)."""
    user = staff_member(username="desk")
    with time_machine.travel(NOW, tick=False):
        client.force_login(user)
    return client


def held_order(at: dt.datetime) -> Order:
    """An online visitor's order of two, held until a provider confirms its payment."""
    with time_machine.travel(at, tick=False):
        return place_order(
            buyer=UserFactory(),
            email="ada@example.com",
            ticket_type="general",
            ticket_date=TODAY,
            lines=[{"category": "adult", "quantity": 2}],
        )


def paid(order: Order) -> Order:
    start_payment(order_id=order.pk, by=staff_member(), provider_name=DESK, method="card")
    return order


def expired(order: Order) -> Order:
    with time_machine.travel(NOW, tick=False):
        assert release_expired_holds() == 1
    return order


def cancelled(order: Order) -> Order:
    with time_machine.travel(NOW, tick=False):
        cancel_order(order_id=order.pk, by=staff_member())
    return order


ORDERS = {
    "paid": lambda: paid(held_order(NOW)),
    "held": lambda: held_order(NOW),
    "hold run out, not yet released": lambda: held_order(BEFORE_ITS_HOLD_RAN_OUT),
    "hold run out and released": lambda: expired(held_order(BEFORE_ITS_HOLD_RAN_OUT)),
    "paid, then cancelled": lambda: cancelled(paid(held_order(NOW))),
}
# What the faces that print, draw or send the tickets answer, and what the door does.
NOT_PAID = ("not_paid", "not_paid", "not_paid")
EXPECTED = {
    "paid": ("served", "served", "admitted"),
    "held": NOT_PAID,
    "hold run out, not yet released": NOT_PAID,
    "hold run out and released": NOT_PAID,
    # Printed stamped CANCELLED; the email is a confirmed order's.
    "paid, then cancelled": ("served", "cancelled", "cancelled"),
}


def api(response) -> str:
    return "served" if response.status_code == 200 else response.json()["code"]


def desk(response) -> str:
    """What the desk said: the tickets, or its message's problem code (a message's tags)."""
    if response.get("Content-Type") == "application/pdf":
        return "served"
    [message] = get_messages(response.wsgi_request)
    return "served" if message.level_tag == "success" else message.extra_tags


def desk_page(page: str) -> str:
    assert ('id="print"' in page) != ('id="not-paid"' in page)
    return "served" if 'id="print"' in page else "not_paid"


def admin_ticket_page(page: str) -> str:
    if "museum-ticket-image" in page:
        return "served"
    assert 'data-code="not_paid"' in page
    return "not_paid"


@pytest.mark.parametrize("state", list(ORDERS))
def test_every_face_answers_an_order_alike(state, staff_client, desk_client):
    order = ORDERS[state]()
    ticket = order.tickets.order_by("confirmation_code").first()
    assert ticket is not None
    desk_url = f"/desk/orders/{order.pk}/"

    with time_machine.travel(NOW, tick=False):
        prints = {
            "API PDF": api(staff_client.get(f"/v1.1/orders/{order.pk}/tickets.pdf")),
            "API image": api(staff_client.get(f"/v1.1/tickets/{ticket.pk}/qr")),
            "desk PDF": desk(desk_client.get(f"{desk_url}tickets.pdf")),
            "desk order page": desk_page(desk_client.get(desk_url).content.decode()),
            "admin ticket page": admin_ticket_page(
                desk_client.get(f"/admin/orders/ticket/{ticket.pk}/change/").content.decode()
            ),
        }
        sent = desk(desk_client.post(f"{desk_url}resend"))
        scanned = staff_client.post(
            "/v1.1/tickets/check-in", {"code": ticket.confirmation_code}, format="json"
        )
        door = "admitted" if scanned.status_code == 200 else scanned.json()["reason"]

    printed, mailed, admitted = EXPECTED[state]
    assert prints == dict.fromkeys(prints, printed)
    assert (sent, door) == (mailed, admitted)


def test_the_desk_takes_a_held_orders_payment_where_it_offered_print_then_prints(desk_client):
    order = held_order(NOW)
    page = f"/desk/orders/{order.pk}/"

    with time_machine.travel(NOW, tick=False):
        before = desk_client.get(page).content.decode()
        paying = {"payment": "cash", "tendered": "40"}
        after = desk_client.post(f"{page}pay", paying, follow=True).content.decode()
        printed = desk_client.get(f"{page}tickets.pdf")

    assert 'id="take-payment"' in before and 'id="print"' not in before
    change = escape(f"Change to give: {money(Decimal('10'))}")
    assert change in after and "Paid: print the tickets." in after
    assert 'id="print"' in after and 'id="take-payment"' not in after
    assert Order.objects.get(pk=order.pk).status == OrderStatus.CONFIRMED
    assert printed["Content-Type"] == "application/pdf"


def checked_in(order: Order) -> Order:
    with time_machine.travel(NOW, tick=False):
        first = order.tickets.order_by("confirmation_code").first()
        assert first is not None
        check_in(scanned=first.confirmation_code, by=staff_member())
    return order


STATES = {
    **ORDERS,
    "paid, then checked in": lambda: checked_in(paid(held_order(NOW))),
}
# Ticket.state of the order's first ticket in each, and the door's reason for it.
SAID = {
    "paid": (TicketState.VALID, "admitted"),
    "held": (TicketState.HELD, "not_paid"),
    "hold run out, not yet released": (TicketState.HOLD_RAN_OUT, "not_paid"),
    "hold run out and released": (TicketState.HOLD_RAN_OUT, "not_paid"),
    "paid, then cancelled": (TicketState.CANCELLED, "cancelled"),
    "paid, then checked in": (TicketState.CHECKED_IN, "already_checked_in"),
}


@pytest.mark.parametrize("state", list(STATES))
def test_every_face_says_where_a_ticket_stands_alike(state, staff_client, desk_client):
    """The API's order answer, the admin's list and its filter, the desk's order page, the
    ticket's own state and the door: one answer (Ticket.state), a held ticket never called
    valid."""
    order = STATES[state]()
    ticket = order.tickets.order_by("confirmation_code").first()
    assert ticket is not None
    expected, door_reason = SAID[state]

    with time_machine.travel(NOW, tick=False):
        answer = staff_client.get(f"/v1.1/orders/{order.pk}").json()
        listed = desk_client.get("/admin/orders/ticket/").content.decode()
        filtered = desk_client.get(f"/admin/orders/ticket/?status={expected}").content.decode()
        own = Ticket.objects.select_related("order").get(pk=ticket.pk).state()
        desk_row = desk_client.get(f"/desk/orders/{order.pk}/").content.decode()
        scanned = staff_client.post(
            "/v1.1/tickets/check-in", {"code": ticket.confirmation_code}, format="json"
        )

    said = {t["confirmationCode"]: t["status"] for t in answer["tickets"]}
    row = re.search(rf"{ticket.confirmation_code}.*?</tr>", listed, re.S)
    assert row is not None
    assert (own, said[ticket.confirmation_code]) == (expected, expected)
    assert f">{TicketState(expected).label}<" in row[0]
    assert ticket.confirmation_code in filtered
    on_desk = re.search(rf"{ticket.confirmation_code}.*?data-state=\"(\w+)\"", desk_row, re.S)
    assert on_desk is not None and on_desk[1] == expected
    door = "admitted" if scanned.status_code == 200 else scanned.json()["reason"]
    assert door == door_reason
