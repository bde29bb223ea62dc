"""The order and its lines: tickets (one admission each) and membership sales, with the
image kept for each ticket."""

import uuid
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from events.models import EventDate, SpecialEvent
from hours.models import EntrySlot, MuseumDay
from museum import i18n
from museum.money import ZERO

from .catalogue import VisitorCategory
from .memberships import Membership
from .vouchers import Voucher

if TYPE_CHECKING:
    from .donations import Donation
    from .fees import Fee

# What an anonymised order keeps instead of its buyer's address: a valid address at a domain
# reserved never to exist (RFC 2606), so the row still passes the field's validation.
ANONYMISED_EMAIL = "anonymised@anonymised.invalid"


class OrderStatus(models.TextChoices):
    CONFIRMED = "confirmed", "Confirmed"
    HELD = "held", "Held (not paid yet)"
    EXPIRED = "expired", "Hold expired"
    CANCELLED = "cancelled", "Cancelled"


class Channel(models.TextChoices):
    """How an order is paid: through a payment provider, on the partner's account, or by
    invoice (a group's: confirmed at once, its tickets valid, paid later by its due dates)."""

    ONLINE = "online", "Online (paid through a provider)"
    ON_ACCOUNT = "on_account", "On account (a sales partner)"
    INVOICE = "invoice", "By invoice (a group, paid later)"


class OrderKind(models.TextChoices):
    """What an order sells (its `ticket_type`): a visit of general entry or of a special event
    (its tickets are of that TicketType), memberships (MembershipSale lines, no tickets), or
    gift cards (the giftcards app's, each naming its order; no tickets, no places)."""

    GENERAL = "general", "General entry"
    EVENT = "event", "Special event"
    MEMBERSHIP = "membership", "Memberships"
    GIFT_CARD = "giftcard", "Gift cards"
    DONATION = "donation", "Donations"


class Order(models.Model):
    """Tickets bought together, for one date (and one slot or event): all taken, or none."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    buyer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="orders"
    )
    email = models.EmailField()
    # The mailbox `email` reaches (orders.services.limits.mailbox_of): what the limits on places
    # and emails count by, so that an address's spellings share them.
    mailbox = models.CharField(max_length=254, blank=True, db_index=True, editable=False)
    phone = models.CharField(max_length=32, blank=True)
    # The buyer's name, if given: what the desk finds an order by besides its codes and email.
    name = models.CharField(max_length=100, blank=True)
    # A business buying (a school, a company): an invoice, not a receipt, is issued to it when
    # the order is confirmed (orders.services.receipts). Blank: a receipt.
    invoice_company = models.CharField(max_length=200, blank=True, default="", db_default="")
    invoice_address = models.CharField(max_length=500, blank=True, default="", db_default="")
    invoice_vat_id = models.CharField(
        "invoice VAT id", max_length=40, blank=True, default="", db_default=""
    )
    # The language its buyer reads: its email, PDF and ticket images speak it (MUSEUM_LANGUAGES).
    language = models.CharField(max_length=8, default=i18n.museum_language_code)
    status = models.CharField(max_length=10, choices=OrderStatus.choices)
    hold_expires_at = models.DateTimeField(null=True, blank=True)
    confirmation_code = models.CharField(max_length=40, unique=True)
    ticket_type = models.CharField("type", max_length=10, choices=OrderKind.choices)
    date = models.DateField(db_index=True)
    event = models.ForeignKey(
        SpecialEvent, on_delete=models.PROTECT, null=True, blank=True, related_name="orders"
    )
    slot = models.ForeignKey(
        EntrySlot, on_delete=models.PROTECT, null=True, blank=True, related_name="orders"
    )
    total = models.DecimalField(max_digits=10, decimal_places=2)
    # What its confirmed payments took and what its refunds give back (every Refund's amount),
    # added to by the services that record them (orders.services.payments, orders.refunds)
    # under the order's row lock: sums of those ledgers, kept here so that the database holds
    # that an order is never paid more than its total and what it gives back.
    paid = models.DecimalField(
        max_digits=10, decimal_places=2, default=ZERO, db_default=ZERO, editable=False
    )
    paid_back = models.DecimalField(
        max_digits=10, decimal_places=2, default=ZERO, db_default=ZERO, editable=False
    )
    channel = models.CharField(max_length=10, choices=Channel.choices, default=Channel.ONLINE)
    # A member visit: the membership whose free member places (Ticket.member) it takes.
    membership = models.ForeignKey(
        Membership, on_delete=models.PROTECT, null=True, blank=True, related_name="visits"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    # Whether the museum mails its buyer (confirmation, changes, cancellation): decided when it
    # is placed, by the face that sells it (a reseller's customer is the reseller's to tell:
    # octo.models.PartnerTerms.museum_sends_tickets), so every later email follows it.
    mail_buyer = models.BooleanField(default=True, db_default=True, editable=False)
    confirmation_sent_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The attempt at its confirmation email waiting in the task queue, or running; empty once
    # sent or given up.
    confirmation_task_id = models.CharField(max_length=64, blank=True, editable=False)
    # The email's claim (orders.tasks): the number of the last attempt that claimed it, and when
    # the attempt sending it now did (empty while none is).
    confirmation_attempt = models.PositiveSmallIntegerField(default=0, db_default=0, editable=False)
    confirmation_claimed_at = models.DateTimeField(null=True, blank=True, editable=False)

    # The order's tickets as its answer shows them, kept on it by the service or selector that
    # loaded or sold them (orders.selectors.tickets_of), so serializing it reads nothing more.
    sold_tickets: list["Ticket"]
    # Its donations, where the service or selector that sold or loaded them kept them (else
    # unset, and readers read `donations`).
    sold_donations: list["Donation"]
    # A group's fees in force, where the service or selector that sold or loaded them kept them.
    sold_fees: list["Fee"]
    # What its refunds come to, where the service knows it without a read (a new order: 0, a
    # changed one: orders.selectors.order_to_change); else unset, and its answer reads `refunds`.
    refunded: Decimal

    class Meta:
        ordering = ["-created_at"]
        permissions = [
            ("cancel_any_order", "Can cancel any order, past the deadline too"),
            ("sell_on_account", "Can sell on account (a sales partner; paid by invoice)"),
            ("take_desk_payment", "Can take a payment at the desk (cash or card terminal)"),
            ("sell_at_desk", "Can sell, move, reprint and resend orders at the front desk"),
        ]
        indexes = [
            models.Index(
                fields=["hold_expires_at"],
                name="order_holds_due",
                condition=Q(status="held"),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                name="order_paid_within_total",
                condition=Q(paid__lte=F("total") + F("paid_back")),
            ),
            models.CheckConstraint(
                name="held_order_has_expiry",
                condition=~Q(status="held") | Q(hold_expires_at__isnull=False),
            ),
            # A membership admits one member visit a day.
            models.UniqueConstraint(
                fields=["membership", "date"],
                condition=Q(membership__isnull=False, status__in=["held", "confirmed"]),
                name="one_member_visit_a_day",
            ),
        ]

    def __str__(self):
        return self.confirmation_code

    def hold_ran_out(self, now: datetime | None = None) -> bool:
        """Whether its hold has run out: released (expired), or held past `hold_expires_at`
        though no sweep has released it yet. The one answer every face and rule reads;
        `holds_run_out` is the same as a filter."""
        if self.status == OrderStatus.EXPIRED:
            return True
        due = self.hold_expires_at
        return (
            self.status == OrderStatus.HELD and due is not None and due <= (now or timezone.now())
        )

    @staticmethod
    def holds_run_out(now: datetime, prefix: str = "") -> Q:
        """hold_ran_out as a filter on orders (`prefix`: the path to the order, e.g. "order__")."""
        return Q(**{f"{prefix}status": OrderStatus.EXPIRED}) | Order.run_out_unreleased(now, prefix)

    @staticmethod
    def run_out_unreleased(now: datetime, prefix: str = "") -> Q:
        """Of holds_run_out, those no sweep has released yet: their places still counted taken.
        Read through the partial index of held orders (holds_run_out's OR with `expired` reads
        every order)."""
        return Q(**{f"{prefix}status": OrderStatus.HELD, f"{prefix}hold_expires_at__lte": now})

    def paid_in_full(self) -> bool:
        """Whether what its payments took, less what went back, covers its total: the one
        answer to "is this paid?" (a free order is; a held one confirms when it is)."""
        return self.paid - self.paid_back >= self.total

    @property
    def due(self) -> Decimal:
        """What is left to pay of its total (0 once paid in full)."""
        return max(self.total - (self.paid - self.paid_back), ZERO)

    @property
    def sells_memberships(self) -> bool:
        """Whether it sells memberships (MembershipSale lines) rather than a visit's tickets."""
        return self.ticket_type == OrderKind.MEMBERSHIP

    @property
    def sells_gift_cards(self) -> bool:
        return self.ticket_type == OrderKind.GIFT_CARD

    @property
    def sells_visit(self) -> bool:
        """Whether it sells a visit's tickets, which take places."""
        return self.ticket_type in (OrderKind.GENERAL, OrderKind.EVENT)


class TicketType(models.TextChoices):
    # Shown at the door, in the staff member's language.
    EVENT = "event", _("Special event")
    GENERAL = "general", _("General entry")


def line_tax_rate() -> models.DecimalField:
    return models.DecimalField(
        "tax rate (%)", max_digits=4, decimal_places=2, default=ZERO, db_default=ZERO
    )


def line_tax() -> models.DecimalField:
    return models.DecimalField(
        "tax included", max_digits=8, decimal_places=2, default=ZERO, db_default=ZERO
    )


class MembershipSaleKind(models.TextChoices):
    NEW = "new", "New membership"
    GIFT = "gift", "Gift membership"
    RENEWAL = "renewal", "Renewal"


class MembershipSale(models.Model):
    """An order's line selling a period of a membership (new, a gift, or a renewal), paid, refunded
    and reported with its order as a ticket is. The period is set when the order is confirmed
    (a gift's when it is redeemed)."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="membership_sales")
    membership = models.ForeignKey(Membership, on_delete=models.PROTECT, related_name="sales")
    kind = models.CharField(max_length=10, choices=MembershipSaleKind.choices)
    price = models.DecimalField("price paid", max_digits=8, decimal_places=2)
    # Its rate and the tax in its price, as sold (orders.services.taxes): `price` is gross.
    tax_rate = line_tax_rate()
    tax = line_tax()
    valid_from = models.DateField(null=True, blank=True)
    valid_until = models.DateField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["order", "pk"]
        verbose_name = "membership sale"
        constraints = [
            models.CheckConstraint(
                name="membership_sale_price_not_negative", condition=Q(price__gte=0)
            ),
            models.CheckConstraint(
                name="membership_sale_tax_within_price",
                condition=Q(tax__gte=0, tax__lte=F("price")),
            ),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} of {self.membership}"


class TicketState(models.TextChoices):
    """Where a ticket stands (Ticket.state): what the API, the admin, the desk and OCTO say of
    it, and what the door's rules decide (tickets/services.py refuses in the same order)."""

    HELD = "held", "Not paid yet (held)"
    HOLD_RAN_OUT = "hold_ran_out", "Not paid: the hold ran out"
    CANCELLED = "cancelled", "Cancelled"
    CHECKED_IN = "checked_in", "Checked in"
    VALID = "valid", "Valid (not used yet)"


class Ticket(models.Model):
    """One admission, for one day: general entry, or one date of a special event."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    buyer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tickets"
    )
    ticket_type = models.CharField("type", max_length=10, choices=TicketType.choices)
    date = models.DateField(db_index=True)
    event = models.ForeignKey(
        SpecialEvent, on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )
    # The row that counts the ticket's place: PROTECT, so that row (and its count) cannot be
    # deleted while a ticket needs it. A general ticket's day is its date (MuseumDay's key).
    museum_day = models.ForeignKey(
        MuseumDay, on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )
    event_date = models.ForeignKey(
        EventDate, on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )
    price = models.DecimalField("price paid", max_digits=8, decimal_places=2)
    # Its rate and the tax in its price, as sold (orders.services.taxes): `price` is gross.
    tax_rate = line_tax_rate()
    tax = line_tax()
    confirmation_code = models.CharField(max_length=40, unique=True)
    purchased_at = models.DateTimeField(auto_now_add=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    # Who cancelled it: empty when a hold ran out or the museum called its event off.
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    checked_in_at = models.DateTimeField(null=True, blank=True)
    checked_in_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    # The sale it belongs to, which keeps the buyer's contact data, the total and the email.
    order = models.ForeignKey("Order", on_delete=models.PROTECT, related_name="tickets")
    # Its order is held, not confirmed: not valid at the door yet. Kept on the ticket so that
    # admission asks the ticket alone, as it does for cancelled_at.
    held = models.BooleanField(default=False)
    category = models.ForeignKey(
        VisitorCategory,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="tickets",
    )
    slot = models.ForeignKey(
        EntrySlot, on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )
    # A member's free place (its order's membership): counted on its slot's member_sold too.
    member = models.BooleanField(default=False)
    # The voucher that lowered its price, one of its uses, and by how much (its catalogue
    # price, less a member's discount where the voucher stacks, less `price`).
    voucher = models.ForeignKey(
        Voucher, on_delete=models.PROTECT, null=True, blank=True, related_name="tickets"
    )
    discount = models.DecimalField(max_digits=8, decimal_places=2, default=ZERO, db_default=ZERO)

    class Meta:
        # The table it has had since tickets were an app of their own.
        db_table = "tickets_ticket"
        ordering = ["-purchased_at"]
        # Seeing every ticket is Django's own view_ticket; letting holders in is this one.
        permissions = [("check_in_ticket", "Can check tickets in at the door")]
        constraints = [
            models.CheckConstraint(
                name="event_ticket_has_event",
                condition=Q(ticket_type="event", event__isnull=False)
                | Q(ticket_type="general", event__isnull=True),
            ),
            models.CheckConstraint(
                name="ticket_tax_within_price", condition=Q(tax__gte=0, tax__lte=F("price"))
            ),
            models.CheckConstraint(
                name="ticket_counted_on_its_row",
                condition=Q(ticket_type="event", event_date__isnull=False, museum_day__isnull=True)
                | Q(ticket_type="general", event_date__isnull=True, museum_day=F("date")),
            ),
        ]

    def __str__(self):
        return self.confirmation_code

    @property
    def is_event_ticket(self) -> bool:
        return self.ticket_type == TicketType.EVENT

    def state(self, now: datetime | None = None) -> str:
        """Where it stands (TicketState), first what the door refuses first: a ticket of an
        order not paid is held, or its hold ran out (its order is read only then); then
        cancelled, checked in, valid. `in_state` is the same as a filter."""
        if self.held and self.order.hold_ran_out(now):
            return TicketState.HOLD_RAN_OUT
        if self.held and self.cancelled_at is None:
            return TicketState.HELD
        if self.cancelled_at is not None:
            return TicketState.CANCELLED
        return TicketState.CHECKED_IN if self.checked_in_at else TicketState.VALID

    @staticmethod
    def in_state(state: str, now: datetime) -> Q:
        """The tickets whose `state(now)` is `state`, as a filter."""
        ran_out = Q(held=True) & Order.holds_run_out(now, prefix="order__")
        return {
            TicketState.HOLD_RAN_OUT: ran_out,
            TicketState.HELD: Q(held=True, cancelled_at__isnull=True) & ~ran_out,
            TicketState.CANCELLED: Q(cancelled_at__isnull=False) & ~ran_out,
            TicketState.CHECKED_IN: Q(held=False, cancelled_at__isnull=True)
            & Q(checked_in_at__isnull=False),
            TicketState.VALID: Q(held=False, cancelled_at__isnull=True, checked_in_at__isnull=True),
        }[TicketState(state)]
