"""Gates a sale passes before it takes places: what the apps above the sale stand in front of
it (a drop's waiting room, drops/gate.py), registered from their AppConfig.ready, as the sale
cannot import them (docs/architecture.md).

A gate is a context manager factory: entered before the sale takes its places (it refuses by
raising), exited once the sale is over, with the sale's exception if it failed, so that what the
gate spent for it (an admission) is given back. Most sales pass every gate without a query.
"""

import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from datetime import date, time
from typing import Any


@dataclass(frozen=True)
class Entry:
    """What a sale is about to take, and who sells it to whom."""

    buyer: Any
    seller: Any  # staff selling at the desk to the person in front of them, else None
    octo: bool  # a reseller's booking through OCTO
    ticket_type: str
    ticket_date: date
    event_id: uuid.UUID | None
    entry_time: time | None
    earliest_slot: bool
    quantity: int
    voucher: str | None
    admission: str | None  # what the buyer was let in with (a drop's admission token)


Gate = Callable[[Entry], AbstractContextManager]
_GATES: list[Gate] = []
_CACHE_READS: list[Callable[[], list[str]]] = []


def register(gate: Gate, *, cache_reads: Callable[[], list[str]] | None = None) -> None:
    """Add a gate; `cache_reads` names what it reads from the cache, for a sale's view's sign-in
    to read along (orders.services.sale.sale_cache_reads)."""
    if gate not in _GATES:
        _GATES.append(gate)
        if cache_reads is not None:
            _CACHE_READS.append(cache_reads)


def cache_reads() -> list[str]:
    return [key for reads in _CACHE_READS for key in reads()]


@contextmanager
def passing(entry: Entry) -> Iterator[None]:
    with ExitStack() as stack:
        for gate in _GATES:
            stack.enter_context(gate(entry))
        yield
