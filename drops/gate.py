"""The drop's gate in front of the sale (orders.services.gates): while a drop is on, its places
sell only to a buyer it let in, once per admission, on every channel. Staff at the desk selling
to the person in front of them pass; so does a waiting list's voucher (the offer is its
admission); resellers through OCTO take their allocation, then queue like anyone."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import transaction

from drops import services
from drops.models import WaitingEntry
from hours.services import register_held_back
from museum import metrics
from orders.services import gates
from orders.services.vouchers import normalized


def register() -> None:
    gates.register(admit, cache_reads=services.ACTIVE.cache_reads)
    register_held_back(services.held_for_the_line)


@contextmanager
def admit(entry: gates.Entry) -> Iterator[None]:
    drop = services.covering(
        ticket_type=entry.ticket_type,
        ticket_date=entry.ticket_date,
        event_id=entry.event_id,
        entry_time=entry.entry_time,
        earliest_slot=entry.earliest_slot,
    )
    if drop is None or entry.seller is not None or _offered(drop, entry.voucher, to=entry.buyer):
        yield
        return
    if entry.octo and drop.octo_allocation and not entry.admission:
        if services.take_reseller_places(drop, entry.quantity):
            with _given_back_if_failed(
                lambda: services.give_back_reseller_places(drop, entry.quantity)
            ):
                yield
            services.recount_after_commit(drop)
            return
    member = services.spend_admission(
        drop, buyer=entry.buyer, token=entry.admission, quantity=entry.quantity
    )
    with _given_back_if_failed(lambda: services.give_back_admission(drop, member)):
        yield
    transaction.on_commit(lambda: metrics.DROP_TICKETS_SOLD.inc(entry.quantity))
    services.recount_after_commit(drop)


@contextmanager
def _given_back_if_failed(give_back) -> Iterator[None]:
    try:
        yield
    except BaseException:
        give_back()
        raise


def _offered(drop, code: str | None, *, to) -> bool:
    """Whether the code is a voucher the drop's waiting list offered this buyer: theirs alone,
    as an admission is."""
    if not code or to is None or not to.pk:
        return False
    offers = WaitingEntry.objects.filter(drop=drop, account=to, voucher__code=normalized(code))
    return offers.exists()
