"""The issue's scenario end to end: a family holds four places in a 10:30 slot, pays, gets one
email with a four-page PDF, cancels a ticket the day before and is paid back, and is admitted at
the door at 10:20 (not at 10:00)."""

import datetime as dt
import re
from io import BytesIO

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from PIL import Image

from hours.models import EntrySlot, MuseumDay
from orders.models import Refund
from tests.conftest import client_for, run_task_worker
from tests.factories import UserFactory, staff_member

pytestmark = pytest.mark.django_db(transaction=True)

VISIT = dt.date(2030, 6, 12)  # a Wednesday


def at(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))


def test_a_family_visit_from_hold_to_door():
    with time_machine.travel(at(VISIT - dt.timedelta(days=2), 20), tick=False) as clock:
        call_command(
            "seed_hours",
            "--start", VISIT.isoformat(), "--days", "1", "--pattern", "wed 10:00-17:00",
            "--slot-minutes", "30", "--slot-capacity", "40",
            verbosity=0,
        )  # fmt: skip
        family = client_for(UserFactory(username="family"))
        door = client_for(staff_member(username="door"))

        slots = family.get(f"/v1.1/museum-hours/{VISIT}/slots").json()
        assert {"entryTime": "10:30", "capacity": 40, "available": 40, "over": False} in slots

        # Two days before: hold four places, then pay (the demo provider's page).
        held = family.post(
            "/v1.1/orders",
            {
                "email": "family@example.com",
                "ticketType": "general",
                "ticketDate": VISIT.isoformat(),
                "entryTime": "10:30",
                "lines": [
                    {"category": "adult", "quantity": 2},
                    {"category": "child", "quantity": 2},
                ],
                "hold": True,
            },
            format="json",
        ).json()
        assert held["status"] == "held" and held["total"] == 45
        order_url = f"/v1.1/orders/{held['orderId']}"

        clock.shift(dt.timedelta(minutes=5))
        assert family.post(f"{order_url}/confirm").status_code == 402
        payment = family.post(f"{order_url}/payments", {"provider": "demo"}, format="json").json()
        assert payment["state"] == "pending" and payment["amount"] == 45
        assert Client().post(payment["payUrl"], {"outcome": "pay"}).status_code == 302
        assert family.get(order_url).json()["status"] == "confirmed"
        run_task_worker()
        [email] = mail.outbox
        [(_, pdf, kind), (_, _, calendar), (receipt, _, _)] = email.attachments
        assert kind == "application/pdf" and calendar == "text/calendar"
        assert receipt.startswith("R") and receipt.endswith(".pdf")  # the receipt, beside
        assert len(re.findall(rb"/Type\s*/Page\b", pdf)) == 4
        assert family.get(f"{order_url}/tickets.pdf").content.startswith(b"%PDF-")

    tickets = held["tickets"]
    child = next(ticket for ticket in tickets if ticket["category"] == "child")
    adult = next(ticket for ticket in tickets if ticket["category"] == "adult")

    # The day before: one child cannot come; the ticket is cancelled and 7.50 is paid back.
    with time_machine.travel(at(VISIT - dt.timedelta(days=1), 9), tick=False):
        cancelled = family.post(f"{order_url}/tickets/{child['ticketId']}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["refundDue"] == 7.5
        run_task_worker()
        refund = Refund.objects.get()
        assert (refund.amount, refund.state, refund.payment.provider) == (7.5, "done", "demo")
        assert EntrySlot.objects.get(day_id=VISIT, entry_time=dt.time(10, 30)).sold == 3
        assert MuseumDay.objects.get(date=VISIT).sold == 3
        image = family.get(f"/v1.1/tickets/{child['ticketId']}/qr")
        assert Image.open(BytesIO(image.content)).mode == "RGB"  # stamped CANCELLED in red

    # The day itself, at the door.
    code = {"code": adult["confirmationCode"]}
    with time_machine.travel(at(VISIT, 10), tick=False):
        early = door.post("/v1.1/tickets/check-in", code, format="json")
        assert early.status_code == 409 and early.json()["reason"] == "too_early"
    with time_machine.travel(at(VISIT, 10, 20), tick=False):
        assert door.post("/v1.1/tickets/check-in", code, format="json").status_code == 200
        void = door.post(
            "/v1.1/tickets/check-in", {"code": child["confirmationCode"]}, format="json"
        )
        assert void.status_code == 409 and void.json()["reason"] == "cancelled"
        # Too late now for the family to cancel the rest.
        late = family.post(f"{order_url}/cancel")
        assert late.status_code == 409 and late.json()["reason"] == "too_late"
