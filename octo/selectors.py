"""What OCTO bookings come to for a partner: the monthly statement, per booking."""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from octo.models import Booking
from orders.models import OrderStatus


@dataclass(frozen=True)
class StatementLine:
    """One confirmed booking of the month: what the visitor paid, the partner keeps, we get."""

    uuid: str
    reseller_reference: str
    supplier_reference: str
    confirmed_on: date
    retail: Decimal
    commission: Decimal
    net: Decimal


def partner_statement(*, partner, month: date) -> list[StatementLine]:
    """The partner's OCTO bookings confirmed in `month` (and not cancelled), oldest first."""
    first = month.replace(day=1)
    after = (first + timedelta(days=32)).replace(day=1)
    bookings = Booking.objects.select_related("order").filter(
        partner=partner,
        order__status=OrderStatus.CONFIRMED,
        order__confirmed_at__date__gte=first,
        order__confirmed_at__date__lt=after,
    )
    lines = []
    for booking in bookings.order_by("order__confirmed_at"):
        order = booking.order
        assert order.confirmed_at is not None
        net = booking.net_total if booking.net_total is not None else order.total
        lines.append(
            StatementLine(
                uuid=booking.uuid,
                reseller_reference=booking.reseller_reference,
                supplier_reference=order.confirmation_code,
                confirmed_on=order.confirmed_at.date(),
                retail=order.total,
                commission=order.total - net,
                net=net,
            )
        )
    return lines
