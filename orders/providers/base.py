"""The one interface of a payment provider: who may use it, starting (and stopping) a payment,
its notification of the outcome, reading back what it took, and paying back.

A provider only talks to the outside: the services (orders.services.payments) decide what a
payment means for the order, under the same locks as a sale.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from museum.exceptions import NotFound
from orders.models import Payment, Refund, RefundState


class ProviderError(Exception):
    """The provider refused or failed the call; its message is kept for staff."""


@dataclass(frozen=True)
class Started:
    """What starting a payment gave: the provider's id for it and what the client needs."""

    reference: str = ""
    client_secret: str | None = None  # Stripe: for Stripe.js to complete the payment
    pay_url: str | None = None  # demo: the page that completes it
    paid: bool = False  # the desk: money already in hand


@dataclass(frozen=True)
class Notification:
    """A provider's notification, verified: its event's id (each is acted on once), the
    provider's id of the payment, and whether it says the payment succeeded or failed."""

    event_id: str
    reference: str
    succeeded: bool
    message: str = ""  # a failure's reason, for staff


@dataclass(frozen=True)
class Received:
    """What the provider itself says a payment took, read back from it: a notification's word is
    checked against this before the order moves."""

    succeeded: bool
    amount: Decimal
    currency: str  # ISO 4217, upper case
    payment_id: str  # the museum's payment the provider's object names


class Provider:
    name: str
    # Pays back without calling out (a record, or staff by hand): settled in the cancellation's
    # own transaction, with no task.
    settles_locally = False
    # Pays with value the museum keeps (a gift card): its refunds go back onto it, never onto
    # another card.
    stored_value = False

    def offered_to(self, account) -> bool:
        raise NotImplementedError

    def prepare(self, *, order, due: Decimal, code: str) -> tuple[Decimal, str]:
        """What a new payment of `order` takes and its reference, before it is written: by
        default all that is `due`, no reference yet (the provider gives one when started). A
        gift card takes what its `code` holds, up to what is due. Raises MuseumProblem."""
        return due, ""

    def start(self, payment: Payment) -> Started:
        """Start taking `payment`; for one already started (it has a reference), what it
        started again, so that a buyer's second try completes the same payment.
        Raises ProviderError."""
        raise NotImplementedError

    def pay_url(self, payment: Payment) -> str | None:
        """The page where the buyer completes `payment`, for every answer that lists it, while
        that page can still complete it; by default none (Stripe's is completed by Stripe.js)."""
        return None

    def cancel(self, payment: Payment) -> None:
        """Make sure `payment`, not completed, can no longer take money. Raises ProviderError,
        for one the provider completed meanwhile too. By default nothing is open at the
        provider."""

    def handle_notification(
        self, *, body: bytes, headers: Mapping[str, str]
    ) -> Notification | None:
        """The provider's call about a payment, verified (BadNotification if it does not verify
        or has not the provider's shape); None for a call about something else. By default the
        provider makes none (NotFound)."""
        raise NotFound()

    def read_back(self, payment: Payment) -> Received:
        """What the provider says `payment` took, asked of the provider itself.
        Raises ProviderError."""
        raise NotImplementedError

    def refund(self, refund: Refund) -> tuple[RefundState, str]:
        """Pay `refund.amount` back; the refund's new state and the provider's id for it.
        Raises ProviderError."""
        raise NotImplementedError
