"""Approved groups made directly, past the request's and approval's rules: a group order
(confirmed, by invoice, nothing paid) with one valid ticket a person, and its request."""

import datetime as dt
from decimal import Decimal

from django.utils import timezone

from groups.models import GroupLine, GroupRequest, GroupStatus, OrganisationKind
from orders.codes import new_confirmation_code
from orders.models import Channel, Order, OrderStatus, Ticket, VisitorCategory
from tests.factories import MuseumDayFactory, UserFactory

PRICES = {"child": Decimal("5.00"), "adult": Decimal("10.00")}


def group_visit(
    *,
    date: dt.date,
    lines: dict[str, int] | None = None,
    organisation: str = "Schiller-Gymnasium",
    paid: Decimal = Decimal("0"),
) -> GroupRequest:
    """An approved group of `lines` (category code: people; default 27 pupils and 3 teachers)
    on `date`, its order confirmed and unpaid (or `paid`), its tickets valid."""
    lines = lines or {"child": 27, "adult": 3}
    day = MuseumDayFactory(date=date)
    buyer = UserFactory()
    total = sum(PRICES[code] * people for code, people in lines.items())
    order = Order.objects.create(
        buyer=buyer,
        email="office@schiller.example",
        name=organisation,
        invoice_company=organisation,
        status=OrderStatus.CONFIRMED,
        confirmation_code=new_confirmation_code("order"),
        ticket_type="general",
        date=date,
        total=total,
        paid=paid,
        channel=Channel.INVOICE,
        confirmed_at=timezone.now(),
    )
    group = GroupRequest.objects.create(
        code=new_confirmation_code("group"),
        organisation=organisation,
        organisation_kind=OrganisationKind.SCHOOL,
        contact_name="Ada Teacher",
        email="office@schiller.example",
        mailbox="office@schiller.example",
        date=date,
        status=GroupStatus.APPROVED,
        order=order,
    )
    for code, people in lines.items():
        category = VisitorCategory.objects.get(category=code)
        GroupLine.objects.create(request=group, category=category, quantity=people)
        Ticket.objects.bulk_create(
            Ticket(
                buyer=buyer,
                ticket_type="general",
                date=date,
                museum_day=day,
                price=PRICES[code],
                confirmation_code=new_confirmation_code("ticket-general"),
                order=order,
                category=category,
            )
            for _ in range(people)
        )
    return group
