"""The service's Prometheus metrics: every counter and histogram, declared once, here.

Every layer may import this module (it imports nothing of the apps), so a service counts what it
does where it does it, with what it already holds: an increment never costs a query. Counts of
writes are made after the commit (`transaction.on_commit`), so a rolled-back sale counts nothing.
What is cheaper read when scraped than counted (the task queue, emails waiting, database
connections) is read then, by `museum/monitoring.py`, which also serves `GET /metrics`.

Under gunicorn each worker writes its values to files in PROMETHEUS_MULTIPROC_DIR (set and emptied
by gunicorn.conf.py before the workers start), and a scrape sums every worker's files
(prometheus-client's multiprocess mode); without it (runserver, tests) they live in the process.
docs/operations.md lists them.
"""

import collections
from collections.abc import Iterable

from django.db import transaction
from prometheus_client import Counter, Histogram

from museum.context import current_channel

# Requests. `route` is the URL pattern that matched ("v1.1/orders/<uuid:order_id>"), or
# "unmatched": a path never becomes a label, so scanners cannot grow the series without bound.
HTTP_REQUESTS = Counter("museum_http_requests", "Requests answered", ["route", "method", "status"])
HTTP_REQUEST_DURATION = Histogram(
    "museum_http_request_duration_seconds",
    "Time from the request reaching the service to its answer",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)

# The sale. `channel` is where the sale came from: api, admin, door, or task (museum/context.py).
TICKETS_SOLD = Counter(
    "museum_tickets_sold", "Tickets sold (confirmed)", ["channel", "type", "category"]
)
TICKETS_REFUNDED = Counter(
    "museum_tickets_refunded",
    "Tickets cancelled with their price due back",
    ["channel", "type", "category"],
)
ORDERS_HELD = Counter("museum_orders_held", "Orders placed on hold", ["channel"])
ORDERS_EXPIRED = Counter("museum_orders_expired", "Held orders whose hold ran out")
ORDERS_CANCELLED = Counter("museum_orders_cancelled", "Orders cancelled", ["channel"])

# Drops (drops/): buyers let in from a waiting room's line, tickets a let-in buyer bought, and
# purchases refused for their admission (`reason`: required, used, expired). Those still
# waiting are read when scraped (drops/monitoring.py).
DROP_ADMISSIONS = Counter("museum_drop_admissions", "Buyers let in from a drop's line")
DROP_TICKETS_SOLD = Counter("museum_drop_tickets_sold", "Tickets bought with a drop's admission")
DROP_TOKENS_REFUSED = Counter(
    "museum_drop_tokens_refused", "Purchases refused for their drop admission", ["reason"]
)

# The door. `reason` is the refusal's problem code (too_early, checked_in, ...), empty if admitted.
CHECK_INS = Counter("museum_check_ins", "Tickets scanned at the door", ["outcome", "reason"])

# Confirmation emails (orders/tasks.py); those still waiting are counted when scraped.
EMAILS_SENT = Counter("museum_emails_sent", "Confirmation emails sent")
EMAILS_FAILED = Counter(
    "museum_emails_failed", "Confirmation email attempts that failed", ["final"]
)

# `provider`: e.g. stripe; `state`: the payment's state it reached (confirmed, failed, refunded).
PAYMENTS = Counter(
    "museum_payments", "Payments by provider and the state they reached", ["provider", "state"]
)
# `outcome`: delivered, failed (will retry), given_up.
WEBHOOK_DELIVERIES = Counter(
    "museum_webhook_deliveries", "Outgoing webhook delivery attempts", ["outcome"]
)

# Members' visits, each person once: `kind` is reservation (a member place booked in a slot on a
# timed day) or walk_in (let in by the card on an untimed day). Active members per type are read
# when scraped (orders.membership_reports).
MEMBER_VISITS = Counter("museum_member_visits", "People visiting as members", ["kind"])
MEMBER_RESERVATION, MEMBER_WALK_IN = "reservation", "walk_in"


def count_tickets(counter: Counter, tickets: Iterable) -> None:
    """Count `tickets` (their categories loaded) by channel, type and category, once the
    transaction commits."""
    kinds = [(ticket.ticket_type, _category(ticket)) for ticket in tickets]
    count_ticket_kinds(counter, kinds)


def _category(ticket) -> str:
    # Never a query: a ticket read without its category is counted without it.
    field = type(ticket)._meta.get_field("category")
    if ticket.category_id is None or not field.is_cached(ticket):
        return ""
    return ticket.category.category


def count_ticket_kinds(counter: Counter, kinds: Iterable[tuple[str, str]]) -> None:
    """Count tickets given as (type, category) pairs, once the transaction commits."""
    channel = current_channel()
    counts = collections.Counter(kinds)

    def record() -> None:
        for (ticket_type, category), n in counts.items():
            counter.labels(channel, ticket_type, category).inc(n)

    transaction.on_commit(record)


def count_orders(counter: Counter, n: int = 1, *, by_channel: bool = True) -> None:
    """Count `n` orders once the transaction commits."""
    labelled = counter.labels(current_channel()) if by_channel else counter
    transaction.on_commit(lambda: labelled.inc(n))


def count_payment(*, provider: str, state: str) -> None:
    """Count a payment that reached `state`, once the transaction commits."""
    transaction.on_commit(lambda: PAYMENTS.labels(provider, state).inc())


def count_member_visits(n: int, kind: str) -> None:
    """Count `n` people visiting on a membership (MEMBER_RESERVATION or MEMBER_WALK_IN), once the
    transaction commits."""
    if n > 0:
        transaction.on_commit(lambda: MEMBER_VISITS.labels(kind).inc(n))


def count_delivery(outcome: str) -> None:
    """Count a webhook delivery attempt: delivered, failed (to be tried again) or given_up."""
    WEBHOOK_DELIVERIES.labels(outcome).inc()
