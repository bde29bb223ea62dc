"""The sale: what a visitor buys in one go, an order of tickets, each for a visitor category at
its price, with its payments, refunds and the documents kept for it (the tickets' PDF and
images). It sells general entry (hours) and event dates (events) alike; `tickets`, the layer
above, admits the holders (signed tokens, drawing the image, the door).
"""

import uuid
from datetime import date, datetime
from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from events.models import EventDate, SpecialEvent
from hours.models import EntrySlot, MuseumDay
from museum import i18n

# What an anonymised order keeps instead of its buyer's address: a valid address at a domain
# reserved never to exist (RFC 2606), so the row still passes the field's validation.
ANONYMISED_EMAIL = "anonymised@anonymised.invalid"


# What an order's line calls a member's free place (orders.services.member_visits): no visitor
# category, so no category may take that code (it would never be sold).
MEMBER_CATEGORY = "member"


class VisitorCategory(models.Model):
    """A kind of visitor and what they pay: adult, child, student..."""

    category = models.SlugField(
        "code", max_length=40, unique=True, help_text="What the API calls it, e.g. 'child'."
    )
    # The name of one visitor ("Adult", "Erwachsener") and of several ("Adults", "Erwachsene"):
    # "1 Erwachsener", "2 Erwachsene" in the email and on the cancel page (counted).
    name = models.CharField(max_length=100)
    plural_name = models.CharField(
        "name for several",
        max_length=100,
        blank=True,
        help_text="E.g. 'Adults'; empty: the name serves for any number.",
    )
    general_price = models.DecimalField(
        "general-admission price",
        max_digits=8,
        decimal_places=2,
        validators=[MinValueValidator(Decimal("0"))],
    )
    event_price_percent = models.PositiveSmallIntegerField(
        "share of an event's price (%)",
        default=100,
        validators=[MaxValueValidator(100)],
        help_text="What this visitor pays of a special event's price, in percent.",
    )
    check_at_door = models.BooleanField(
        "check proof at the door",
        default=False,
        help_text="The door asks staff to check proof of age or status.",
    )
    needs_companion = models.BooleanField(
        default=False,
        help_text="Sold only beside a ticket of a category that does not need one (e.g. infants "
        "with an adult).",
    )
    active = models.BooleanField(default=True, help_text="Sold only while active.")
    ordering = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first.")

    class Meta:
        ordering = ["ordering", "category"]
        verbose_name = "visitor category"
        verbose_name_plural = "visitor categories"
        constraints = [
            models.CheckConstraint(
                name="category_price_not_negative", condition=Q(general_price__gte=0)
            ),
            models.CheckConstraint(
                name="category_event_percent_at_most_100",
                condition=Q(event_price_percent__lte=100),
            ),
            models.CheckConstraint(
                name="category_code_not_member",
                condition=~Q(category=MEMBER_CATEGORY),
                violation_error_message=(
                    f"The code '{MEMBER_CATEGORY}' names a member's free place; choose another."
                ),
            ),
        ]

    def __str__(self):
        return self.name

    def counted(self, count: int) -> str:
        """Its name for `count` visitors: the name for one, the plural name for more. Every
        shipped language says one thing with its singular, and more (the only counts a line
        has) with its plural."""
        return self.name if count == 1 else self.plural_name or self.name


class MembershipType(models.Model):
    """What a museum sells as a membership: an annual pass for one, two or a family."""

    code = models.SlugField(
        max_length=40, unique=True, help_text="What the API calls it, e.g. 'family'."
    )
    name = models.CharField(max_length=100)
    description = models.TextField(max_length=2000, blank=True)
    price = models.DecimalField(
        max_digits=8, decimal_places=2, validators=[MinValueValidator(Decimal("0"))]
    )
    validity_months = models.PositiveSmallIntegerField(
        "valid for (months)", default=12, validators=[MinValueValidator(1), MaxValueValidator(120)]
    )
    admits = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text="People one visit admits: 1 for an individual, 2 for a dual, 6 for a family.",
    )
    event_discount_percent = models.PositiveSmallIntegerField(
        "discount on special events (%)", default=0, validators=[MaxValueValidator(100)]
    )
    active = models.BooleanField(default=True, help_text="Sold only while active.")
    ordering = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first.")

    class Meta:
        ordering = ["ordering", "code"]
        verbose_name = "membership type"
        constraints = [
            models.CheckConstraint(
                name="membership_type_price_not_negative", condition=Q(price__gte=0)
            ),
            models.CheckConstraint(
                name="membership_type_admits_someone", condition=Q(admits__gte=1)
            ),
            models.CheckConstraint(
                name="membership_type_discount_at_most_100",
                condition=Q(event_discount_percent__lte=100),
            ),
        ]

    def __str__(self):
        return self.name


class MembershipStatus(models.TextChoices):
    # Bought, not paid yet (or a gift not redeemed yet: it has no holder).
    PENDING = "pending", "Pending (not paid, or a gift not redeemed)"
    ACTIVE = "active", "Active"
    EXPIRED = "expired", "Expired"
    CANCELLED = "cancelled", "Cancelled"


class Validity(models.TextChoices):
    """Whether a membership admits on a day, and if not, why (Membership.validity_on)."""

    VALID = "valid", "Valid"
    PENDING = "pending", "Not paid yet (or a gift not redeemed)"
    NOT_YET_VALID = "not_yet_valid", "Not valid yet"
    EXPIRED = "expired", "Expired"
    CANCELLED = "cancelled", "Cancelled"


class Membership(models.Model):
    """A holder's membership of a type, valid from `valid_from` to `valid_until` (both included),
    the periods its confirmed sales (MembershipSale) bought. Its card carries a signed token of
    its id; `card_code` is what the desk finds it by and a member may type instead."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    membership_type = models.ForeignKey(
        MembershipType, on_delete=models.PROTECT, related_name="memberships"
    )
    # The account that bought it: its own list shows it.
    buyer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="memberships"
    )
    # Empty for a gift until it is redeemed.
    holder_name = models.CharField(max_length=100, blank=True)
    email = models.EmailField(blank=True)
    language = models.CharField(max_length=8, default=i18n.museum_language_code)
    status = models.CharField(
        max_length=10, choices=MembershipStatus.choices, default=MembershipStatus.PENDING
    )
    valid_from = models.DateField(null=True, blank=True)
    valid_until = models.DateField(null=True, blank=True, db_index=True)
    card_code = models.CharField(max_length=40, unique=True)
    # What its card's token is signed with besides the museum's key: empty until the card is
    # replaced (orders.services.member_cards.reissue_card), so that a lost card's token stops
    # verifying. Never shown.
    card_secret = models.CharField(
        max_length=64, blank=True, default="", db_default="", editable=False
    )
    # A gift's code, shown to its buyer; redeeming it names the holder and starts the validity.
    gift_code = models.CharField(max_length=40, unique=True, null=True, blank=True)
    redeemed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    activated_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    # The renewal reminders sent (30 and 7 days before valid_until), each once per period.
    reminded_30_at = models.DateTimeField(null=True, blank=True, editable=False)
    reminded_7_at = models.DateTimeField(null=True, blank=True, editable=False)

    # The order that sold it, kept on it by the sale for its answer
    # (orders.services.memberships.sell_membership).
    order: "Order"

    class Meta:
        ordering = ["-created_at"]
        permissions = [("sell_memberships", "Can sell and renew memberships at the front desk")]
        constraints = [
            models.CheckConstraint(
                name="active_membership_has_validity",
                condition=~Q(status__in=["active", "expired"])
                | Q(valid_from__isnull=False, valid_until__isnull=False),
            ),
            models.CheckConstraint(
                name="membership_valid_until_after_from",
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=F("valid_from")),
            ),
        ]

    def __str__(self):
        return self.card_code

    def validity_on(self, day: date) -> str:
        """Whether it admits on `day` (Validity.VALID) or why not: the one answer every rule,
        door and report asks. One whose last day has passed is expired whether or not the sweep
        that marks it (orders.services.memberships.expire_lapsed) has run yet."""
        if self.status == MembershipStatus.CANCELLED:
            return Validity.CANCELLED
        if self.status == MembershipStatus.PENDING or self.valid_from is None:
            return Validity.PENDING
        if self.status == MembershipStatus.EXPIRED or (
            self.valid_until is not None and self.valid_until < day
        ):
            return Validity.EXPIRED
        if day < self.valid_from:
            return Validity.NOT_YET_VALID
        return Validity.VALID

    def admitted_anyone(self, first: date, last: date) -> bool:
        """Whether it let anyone in from `first` to `last`: a member visit's ticket checked in,
        or a walk-in at the door. What makes it used (its buyer may no longer cancel it); a visit
        booked and not admitted does not count: it is cancelled with the membership."""
        period = {"date__gte": first, "date__lte": last}
        admitted = Ticket.objects.filter(
            order__membership=self, checked_in_at__isnull=False, **period
        )
        return admitted.exists() or self.entries.filter(**period).exists()


class OrderStatus(models.TextChoices):
    CONFIRMED = "confirmed", "Confirmed"
    HELD = "held", "Held (not paid yet)"
    EXPIRED = "expired", "Hold expired"
    CANCELLED = "cancelled", "Cancelled"


class Channel(models.TextChoices):
    """How an order is paid: through a payment provider, or on the partner's account."""

    ONLINE = "online", "Online (paid through a provider)"
    ON_ACCOUNT = "on_account", "On account (a sales partner)"


class OrderKind(models.TextChoices):
    """What an order sells (its `ticket_type`): a visit of general entry or of a special event
    (its tickets are of that TicketType), or memberships (MembershipSale lines, no tickets)."""

    GENERAL = "general", "General entry"
    EVENT = "event", "Special event"
    MEMBERSHIP = "membership", "Memberships"


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

    @property
    def sells_memberships(self) -> bool:
        """Whether it sells memberships (MembershipSale lines) rather than a visit's tickets."""
        return self.ticket_type == OrderKind.MEMBERSHIP


class TicketType(models.TextChoices):
    # Shown at the door, in the staff member's language.
    EVENT = "event", _("Special event")
    GENERAL = "general", _("General entry")


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


class TicketImage(models.Model):
    """The rendered PNG of a ticket, kept so each image is drawn once, not on every request."""

    ticket = models.OneToOneField(
        Ticket, on_delete=models.CASCADE, primary_key=True, related_name="image"
    )
    png = models.BinaryField()
    etag = models.CharField(max_length=64)
    rendered_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "tickets_ticketimage"

    def __str__(self):
        return f"Image of {self.ticket_id}"


class PaymentState(models.TextChoices):
    CREATED = "created", "Created"
    PENDING = "pending", "Pending (the buyer is paying)"
    CONFIRMED = "confirmed", "Confirmed"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    # Taken, then paid back whole: it came after the order's places were gone, or was a second
    # payment of an order already paid.
    REFUNDED = "refunded", "Refunded whole"


class Payment(models.Model):
    """One attempt to pay an order through a provider; exactly one confirms it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="payments")
    provider = models.CharField(max_length=20)
    # The provider's own id for it (Stripe: the PaymentIntent's), empty until it has one.
    reference = models.CharField(max_length=100, blank=True, db_index=True)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3)
    state = models.CharField(
        max_length=10, choices=PaymentState.choices, default=PaymentState.CREATED
    )
    # The desk: cash or card terminal; the provider's message of a failure.
    info = models.CharField(max_length=200, blank=True)
    # Cash at the desk: what the visitor handed over (the change is what it exceeds the amount).
    tendered = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    taken_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Who started it: the buyer, or staff at the desk.",
    )

    # What starting it gave the client (orders.providers.base.Started), on the answer only.
    client_secret: str | None = None
    pay_url: str | None = None

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["order"],
                condition=Q(state="confirmed"),
                name="one_confirmed_payment_per_order",
            ),
            # A new start answers the payment in progress, or cancels it at its provider first.
            models.UniqueConstraint(
                fields=["order"],
                condition=Q(state__in=["created", "pending"]),
                name="one_payment_in_progress_per_order",
            ),
            models.CheckConstraint(name="payment_amount_positive", condition=Q(amount__gt=0)),
        ]

    def __str__(self):
        return f"{self.amount} {self.currency} by {self.provider} ({self.state})"


class RefundState(models.TextChoices):
    CREATED = "created", "Created (being paid back)"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    MANUAL = "manual", "Manual (staff pay it back by hand)"


class RefundSource(models.TextChoices):
    BUYER = "buyer", "Cancelled by the buyer"
    STAFF = "staff", "Cancelled by staff"
    EVENT_CANCELLED = "event_cancelled", "Event called off"
    # A payment that came when the order could not take it, paid back whole at once.
    NOT_PLACED = "not_placed", "Paid after the hold ran out, places gone"
    PAID_AFTER_CANCEL = "paid_after_cancel", "Paid after the order was cancelled"
    ALREADY_PAID = "already_paid", "Paid for an order already paid"


class Refund(models.Model):
    """Money paid back for a cancelled ticket, through the provider that took it (or, without a
    payment to pay it back through, by staff by hand)."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="refunds")
    # The ticket or membership sale it pays back; neither for a payment refunded whole (one that
    # came too late).
    ticket = models.OneToOneField(
        Ticket, on_delete=models.PROTECT, related_name="refund", null=True, blank=True
    )
    membership_sale = models.OneToOneField(
        MembershipSale, on_delete=models.PROTECT, related_name="refund", null=True, blank=True
    )
    payment = models.ForeignKey(
        Payment, on_delete=models.PROTECT, related_name="refunds", null=True, blank=True
    )
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    state = models.CharField(
        max_length=10, choices=RefundState.choices, default=RefundState.CREATED
    )
    source = models.CharField(max_length=20, choices=RefundSource.choices)
    reference = models.CharField(max_length=100, blank=True)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)
    # Its claim by the task paying it back (orders.refunds): the number of the last attempt that
    # claimed it, and when the attempt calling the provider now did (empty while none is).
    attempt = models.PositiveSmallIntegerField(default=0, db_default=0, editable=False)
    claimed_at = models.DateTimeField(null=True, blank=True, editable=False)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Empty: the museum called the event off, or a payment came too late.",
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(name="refund_amount_not_negative", condition=Q(amount__gte=0)),
        ]

    def __str__(self):
        return f"{self.amount} for {self.ticket or self.order}"


class ProviderEvent(models.Model):
    """A provider's notification already handled: its id, once, so a repeat changes nothing."""

    provider = models.CharField(max_length=20)
    event_id = models.CharField(max_length=255)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "event_id"], name="provider_event_once")
        ]

    def __str__(self):
        return f"{self.provider} {self.event_id}"


class SaleLimits(models.Model):
    """An account's own limits on places, set by staff: a shop or kiosk selling for many people
    holds more than one visitor may. Empty: the museum's default (none for sales partners)."""

    account = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sale_limits"
    )
    max_held_places = models.PositiveIntegerField(
        "places held at once", null=True, blank=True, help_text="Empty: the museum's default."
    )
    max_places_per_day = models.PositiveIntegerField(
        "places per visit date", null=True, blank=True, help_text="Empty: the museum's default."
    )
    max_free_places_per_day = models.PositiveIntegerField(
        "free places a day",
        null=True,
        blank=True,
        help_text="Places of free orders in 24 hours. Empty: the museum's default.",
    )

    class Meta:
        verbose_name = "sale limits"
        verbose_name_plural = "sale limits"

    def __str__(self):
        return f"Limits of {self.account}"


class BuyerEmail(models.Model):
    """An email the museum sent a buyer (enqueued): what the daily limit of emails to one mailbox
    counts, every kind alike."""

    class Kind(models.TextChoices):
        CONFIRMATION = "confirmation", "Order confirmation"
        PAID_BACK = "paid_back", "Payment paid back whole"
        CHANGE = "change", "Order changed (moved, tickets cancelled)"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="emails")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    sent_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = "email to a buyer"
        verbose_name_plural = "emails to buyers"

    def __str__(self):
        return f"{self.kind} of {self.order_id}"


class TicketsPdf(models.Model):
    """The order's tickets as a PDF, kept so it is made once (orders.documents): `etag` names
    what it prints, and a request that finds the tickets printing otherwise makes it again."""

    order = models.OneToOneField(
        Order, on_delete=models.CASCADE, primary_key=True, related_name="tickets_pdf"
    )
    pdf = models.BinaryField()
    etag = models.CharField(max_length=64)
    made_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "tickets PDF"
        verbose_name_plural = "tickets PDFs"

    def __str__(self):
        return f"Tickets PDF of {self.order_id}"


class MembershipCard(models.Model):
    """A membership's card as a PNG and a card-sized PDF, kept so each is drawn once; `etag`
    names what it prints (holder, type, validity, language), so a change draws it again."""

    membership = models.OneToOneField(
        Membership, on_delete=models.CASCADE, primary_key=True, related_name="card"
    )
    png = models.BinaryField()
    pdf = models.BinaryField()
    etag = models.CharField(max_length=64)
    made_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "membership card"

    def __str__(self):
        return f"Card of {self.membership_id}"


class ReplacedCard(models.Model):
    """A member card replaced by a new one (lost, stolen): its code and what its token was signed
    with, so that the door tells it apart from a forged or unknown card ("replaced card")."""

    membership = models.ForeignKey(
        Membership, on_delete=models.CASCADE, related_name="replaced_cards"
    )
    card_code = models.CharField(max_length=40, unique=True)
    card_secret = models.CharField(max_length=64, blank=True, editable=False)
    replaced_at = models.DateTimeField(auto_now_add=True)
    replaced_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    def __str__(self):
        return f"Card {self.card_code} (replaced)"


class MemberEntry(models.Model):
    """People a member card let in at the door on a day without entry slots (no reservation):
    at most the type's `admits` a day, counted under the membership's row lock."""

    membership = models.ForeignKey(Membership, on_delete=models.PROTECT, related_name="entries")
    date = models.DateField()
    people = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])
    entered_at = models.DateTimeField(auto_now_add=True)
    admitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-entered_at"]
        verbose_name = "member entry"
        verbose_name_plural = "member entries"
        indexes = [models.Index(fields=["membership", "date"], name="member_entries_of_day")]
        constraints = [
            models.CheckConstraint(name="member_entry_admits_someone", condition=Q(people__gte=1))
        ]

    def __str__(self):
        return f"{self.people} on {self.date} with {self.membership_id}"
