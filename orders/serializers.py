from decimal import Decimal

from django.conf import settings
from django.db.models import TextChoices
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from hours.serializers import HourMinuteField
from museum import i18n
from museum.fields import (
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictDateField,
    StrictIntegerField,
    StrictUUIDField,
)
from orders.models import (
    MEMBER_CATEGORY,
    Channel,
    DocumentKind,
    MembershipStatus,
    OrderStatus,
    PaymentState,
    TicketState,
    TicketType,
    Validity,
)
from orders.selectors import cancel_deadline, is_printable, may_see_gift_code, may_see_holder
from orders.services.memberships import membership_taxed, status_on
from orders.services.pricing import category_price
from orders.services.taxes import donations_of, order_taxes, totals_by_rate
from tickets.serializers import BuyMuseumTicketsRequestSerializer


class CurrencyField(serializers.SerializerMethodField):
    """The museum's currency (MUSEUM_CURRENCY), beside every amount."""

    def __init__(self, **kwargs):
        super().__init__(help_text="ISO 4217 code of every amount, e.g. EUR.", **kwargs)

    def to_representation(self, value) -> str:
        return settings.MUSEUM_CURRENCY


extend_schema_field({"type": "string", "example": "EUR"})(CurrencyField)


class TaxRateField(MoneyField):
    """A tax rate, in percent (9 is 9 %)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_digits", 4)
        kwargs.setdefault("help_text", "Tax rate, in %.")
        super().__init__(**kwargs)


class TaxSerializer(serializers.Serializer):
    """What lines at one tax rate come to (orders.services.taxes)."""

    rate = TaxRateField()
    net = MoneyField(max_digits=10)
    tax = MoneyField(max_digits=10)
    gross = MoneyField(max_digits=10, help_text="Net and tax: what these lines cost.")


class VisitorCategorySerializer(serializers.Serializer):
    category = serializers.CharField(help_text="The code an order names, e.g. 'child'.")
    name = serializers.CharField()
    generalPrice = serializers.SerializerMethodField(
        help_text="Price of general entry, tax included."
    )
    taxRate = TaxRateField(source="tax_rate", help_text="Of general entry, in %.")
    eventPricePercent = serializers.IntegerField(
        source="event_price_percent", help_text="Share of a special event's price paid, in %."
    )
    checkAtDoor = serializers.BooleanField(
        source="check_at_door", help_text="The door checks proof of age or status."
    )
    needsCompanion = serializers.BooleanField(
        source="needs_companion",
        help_text="Sold only beside a ticket of a category that does not need one.",
    )
    payWhatYouWant = serializers.BooleanField(
        source="pay_what_you_want",
        help_text="Its general-entry buyer names the price (a line's `price`), at least "
        "`generalPrice`.",
    )
    currency = CurrencyField()

    @extend_schema_field(MoneyField())
    def get_generalPrice(self, category):
        return MoneyField().to_representation(category_price(category=category, event=None))


class LanguageField(StrictCharField):
    """One of the museum's languages, by its code ("de"; "de-DE" names it too)."""

    def __init__(self, **kwargs):
        super().__init__(max_length=35, **kwargs)

    def to_internal_value(self, data):
        language = i18n.offered(super().to_internal_value(data))
        if language is None:
            raise serializers.ValidationError(
                _("Not one of the museum's languages: %(offered)s.")
                % {"offered": ", ".join(settings.MUSEUM_LANGUAGES)}
            )
        return language


class OrderLineSerializer(serializers.Serializer):
    category = StrictCharField(
        max_length=40,
        help_text="A visitor category's code, or `member`: a member visit's free places (with "
        "`membership`).",
    )
    quantity = StrictIntegerField(min_value=1, help_text="Tickets of this category.")
    voucher = StrictCharField(
        required=False,
        max_length=40,
        help_text="A voucher code for this line's tickets (read case-insensitively).",
    )
    price = MoneyField(
        required=False,
        max_value=Decimal("10000"),
        help_text="What each ticket costs, for a pay-what-you-want category (its "
        "`payWhatYouWant`): at least its `generalPrice`.",
    )


class DonationLineSerializer(serializers.Serializer):
    fund = StrictIntegerField(min_value=1, help_text="A fund's id (`GET /funds`).")
    amount = MoneyField(
        max_value=Decimal("100000"),
        help_text="What is given, within the fund's `minimum` and `maximum`, in cents.",
    )


def donation_lines(**kwargs) -> serializers.ListField:
    return serializers.ListField(
        child=DonationLineSerializer(),
        max_length=5,
        help_text="Gifts to the museum's funds, untaxed, counted in the order's `total`; a "
        "buyer's cancellation never pays them back (staff refund one).",
        **kwargs,
    )


class FundSerializer(serializers.Serializer):
    fund = serializers.IntegerField(source="pk", help_text="Its id, as a donation names it.")
    name = serializers.CharField(help_text="In the request's language.")
    description = serializers.CharField()
    minimum = MoneyField(help_text="The least one donation gives.")
    maximum = MoneyField(help_text="The most one donation gives.")
    suggestedAmounts = serializers.SerializerMethodField(help_text="Offered as buttons.")
    currency = CurrencyField()

    @extend_schema_field(serializers.ListField(child=MoneyField()))
    def get_suggestedAmounts(self, fund) -> list:
        return [MoneyField().to_representation(Decimal(str(a))) for a in fund.suggested_amounts]


class DonateRequestSerializer(serializers.Serializer):
    donations = donation_lines(min_length=1)
    email = serializers.EmailField(max_length=254, help_text="Where its receipt is sent.")
    name = StrictCharField(required=False, max_length=100, help_text="The donor's name.")
    language = LanguageField(required=False, help_text="What its email and receipt speak.")

    validate_email = BuyMuseumTicketsRequestSerializer.validate_email


class InvoiceDetailsSerializer(serializers.Serializer):
    company = StrictCharField(max_length=200, help_text="Who the invoice is addressed to.")
    address = StrictCharField(
        required=False, allow_blank=True, default="", max_length=500, help_text="Its address."
    )
    vatId = StrictCharField(
        source="vat_id",
        required=False,
        allow_blank=True,
        default="",
        max_length=40,
        help_text="Its VAT id, printed on the invoice.",
    )


class PlaceOrderRequestSerializer(BuyMuseumTicketsRequestSerializer):
    entryTime = HourMinuteField(
        source="entry_time",
        required=False,
        input_formats=["%H:%M"],
        help_text="The entry slot, HH:MM; required on a day with timed entry (general only).",
    )
    lines = serializers.ListField(child=OrderLineSerializer(), min_length=1)
    name = StrictCharField(
        required=False, max_length=100, help_text="The buyer's name, as the desk finds it."
    )
    language = LanguageField(
        required=False,
        help_text="What the order's email, PDF and tickets speak: one of the museum's languages "
        "(MUSEUM_LANGUAGES, by default en, de, fr, nl, es); by default the request's "
        "(Accept-Language).",
    )
    hold = StrictBooleanField(
        required=False,
        default=False,
        help_text="Hold the places for MUSEUM_HOLD_MINUTES until POST .../confirm. An online "
        "account's order with a price is held whatever this says, until paid.",
    )
    membership = StrictCharField(
        required=False,
        max_length=100,
        help_text="A member visit: the membership's id or card code. Its `member` lines are "
        "free places (at most the type's `admits`, one visit a day); on a special event its "
        "lines cost less by the type's discount. 409 `membership_not_valid` (with "
        "`validUntil`) unless it is valid on `ticketDate`.",
    )
    invoice = InvoiceDetailsSerializer(
        required=False,
        help_text="A business buying (a school, a company): an invoice to it, with its address "
        "and VAT id, instead of a receipt, once the order is confirmed. A sales partner's order "
        "paid on account is invoiced to the partner, these giving its address and VAT id.",
    )
    voucher = StrictCharField(
        required=False,
        max_length=40,
        help_text="A voucher code for every line it applies to (read case-insensitively); a "
        "line's own `voucher` wins for that line.",
    )
    donations = donation_lines(required=False)
    dryRun = StrictBooleanField(
        source="dry_run",
        required=False,
        default=False,
        help_text="Only price the order (200, a quote), by the sale's own rules; nothing is taken.",
    )

    def validate(self, attrs):
        attrs = super().validate(attrs)
        if attrs["ticket_type"] == TicketType.EVENT and "entry_time" in attrs:
            raise serializers.ValidationError({"entryTime": "Only general entry has slots."})
        return attrs


class CancelRequestSerializer(serializers.Serializer):
    evenIfCheckedIn = StrictBooleanField(
        source="even_if_checked_in",
        required=False,
        default=False,
        help_text="Staff only: cancel a ticket already checked in (recorded on the ticket).",
    )
    refundToGiftCard = StrictBooleanField(
        source="refund_to_gift_card",
        required=False,
        default=False,
        help_text="What its payments took (but a gift card's, which goes back onto that card) "
        "goes onto a new gift card instead: staff, or the buyer where the museum offers it "
        "(MUSEUM_GIFT_CARD_REFUNDS_FOR_BUYERS).",
    )


class OrderTicketSerializer(serializers.Serializer):
    ticketId = serializers.UUIDField(source="id")
    category = serializers.SerializerMethodField(
        help_text="Its visitor category's code; `member`: a member's free place."
    )
    price = MoneyField(help_text="Tax included.")
    taxRate = TaxRateField(source="tax_rate")
    tax = MoneyField(help_text="The tax in its price.")
    discount = MoneyField(help_text="What its voucher took off its price.")
    voucher = serializers.CharField(
        source="voucher.code", required=False, allow_null=True, help_text="Its voucher's code."
    )
    confirmationCode = serializers.CharField(source="confirmation_code")
    entryTime = HourMinuteField(source="slot.entry_time", required=False, allow_null=True)
    cancelled = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField()
    imageUrl = serializers.SerializerMethodField(
        help_text="The ticket as a PNG (getTicketCode); null while its order is not paid, and "
        "for an order never paid (its hold ran out, or it was cancelled held): it has none."
    )

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_category(self, ticket) -> str | None:
        if ticket.member:
            return MEMBER_CATEGORY
        return ticket.category.category if ticket.category is not None else None

    def get_cancelled(self, ticket) -> bool:
        return ticket.cancelled_at is not None

    @extend_schema_field(
        serializers.ChoiceField(
            choices=TicketState.choices,
            help_text="`held`: its order is not paid yet; `hold_ran_out`: it never was, the "
            "hold ran out; then `cancelled`, `checked_in` or `valid`, as the door decides.",
        )
    )
    def get_status(self, ticket) -> str:
        return ticket.state()

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_imageUrl(self, ticket) -> str | None:
        # Its order's answer, asked once for all its tickets (OrderSerializer.get_tickets).
        if not self.context["printable"]:
            return None
        return reverse("ticket-image", kwargs={"ticketId": ticket.pk})

    def to_representation(self, ticket):
        data = super().to_representation(ticket)
        for optional in ("entryTime", "voucher"):
            if data[optional] is None:
                del data[optional]
        return data


class OrderDonationSerializer(serializers.Serializer):
    donationId = serializers.IntegerField(source="pk")
    fund = serializers.IntegerField(source="fund_id", help_text="Its fund's id.")
    name = serializers.CharField(source="fund.name", help_text="Its fund's name.")
    amount = MoneyField(help_text="Untaxed.")
    refunded = serializers.SerializerMethodField(help_text="Given back by staff.")

    def get_refunded(self, donation) -> bool:
        return donation.cancelled_at is not None


class OrderSerializer(serializers.Serializer):
    orderId = serializers.UUIDField(source="id")
    status = serializers.ChoiceField(choices=OrderStatus.choices)
    channel = serializers.ChoiceField(
        choices=Channel.choices,
        help_text="`online`: paid through a payment provider (held until then); `on_account`: "
        "a sales partner's, invoiced monthly.",
    )
    holdExpiresAt = serializers.DateTimeField(
        source="hold_expires_at", required=False, allow_null=True
    )
    confirmationCode = serializers.CharField(source="confirmation_code")
    ticketType = serializers.CharField(source="ticket_type")
    ticketDate = serializers.DateField(source="date")
    eventId = serializers.UUIDField(source="event_id", required=False, allow_null=True)
    entryTime = HourMinuteField(source="slot.entry_time", required=False, allow_null=True)
    eventName = serializers.CharField(source="event.name", required=False, allow_null=True)
    membershipId = serializers.UUIDField(
        source="membership_id",
        required=False,
        allow_null=True,
        help_text="A member visit's membership.",
    )
    email = serializers.EmailField()
    name = serializers.CharField()
    language = serializers.CharField(help_text="What its email, PDF and tickets speak.")
    createdAt = serializers.DateTimeField(source="created_at")
    total = MoneyField(max_digits=10, help_text="What the order cost (a held one: will cost).")
    taxes = serializers.SerializerMethodField(
        help_text="The tax in `total`, per rate: the sums of its lines."
    )
    refundDue = serializers.SerializerMethodField(
        help_text="Paid back or owed back: every refund of the order (its cancelled tickets', "
        "a payment that came after its places were gone)."
    )
    currency = CurrencyField()
    cancellableUntil = serializers.SerializerMethodField(
        help_text="Until when its buyer may cancel it; null once cancelled or expired."
    )
    pdfUrl = serializers.SerializerMethodField(
        help_text="Its tickets as a PDF; null, as its tickets' `imageUrl`, while it is not paid "
        "and for an order never paid or a membership's."
    )
    tickets = serializers.SerializerMethodField()
    donations = serializers.SerializerMethodField(
        help_text="Its gifts to the museum's funds, in `total` at 0 % tax."
    )

    @extend_schema_field(OrderDonationSerializer(many=True))
    def get_donations(self, order):
        return OrderDonationSerializer(donations_of(order), many=True).data

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_cancellableUntil(self, order) -> str | None:
        if order.status not in (OrderStatus.CONFIRMED, OrderStatus.HELD):
            return None
        return serializers.DateTimeField().to_representation(cancel_deadline(order=order))

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_pdfUrl(self, order) -> str | None:
        if not is_printable(order):
            return None
        return reverse("orders-tickets-pdf", kwargs={"orderId": order.pk})

    @extend_schema_field(TaxSerializer(many=True))
    def get_taxes(self, order):
        return TaxSerializer(order_taxes(order), many=True).data

    def get_refundDue(self, order) -> float:
        # Every refund, not only its tickets': a payment refunded whole has none (prefetched by
        # the order list, selectors.viewable_orders). A new or changed order knows the sum.
        due = getattr(order, "refunded", None)
        if due is None:
            due = sum(refund.amount for refund in order.refunds.all())
        return MoneyField().to_representation(due)

    @extend_schema_field(OrderTicketSerializer(many=True))
    def get_tickets(self, order):
        ordered = sorted(order.sold_tickets, key=lambda ticket: ticket.confirmation_code)
        printable = is_printable(order)
        return OrderTicketSerializer(ordered, many=True, context={"printable": printable}).data

    def to_representation(self, order):
        data = super().to_representation(order)
        for optional in ("holdExpiresAt", "eventId", "eventName", "entryTime", "membershipId"):
            if data[optional] is None:
                del data[optional]
        return data


def signed_money(**kwargs) -> MoneyField:
    """An amount of a document: a credit note's are negative."""
    return MoneyField(max_digits=10, min_value=None, **kwargs)


class DocumentTaxSerializer(serializers.Serializer):
    """What a document's lines at one tax rate come to, as it was issued."""

    rate = TaxRateField()
    net = signed_money()
    tax = signed_money()
    gross = signed_money(help_text="Net and tax.")


class DocumentTermSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["deposit", "balance"])
    amount = signed_money()
    due = serializers.DateField()


class SaleDocumentSerializer(serializers.Serializer):
    number = serializers.CharField(help_text="From its kind's gapless series, e.g. R2026-000001.")
    kind = serializers.ChoiceField(
        choices=DocumentKind.choices,
        help_text="`receipt`; `invoice` (a business: its company, address and VAT id); "
        "`credit_note`, for what a cancellation paid back, its amounts negative.",
    )
    issuedAt = serializers.DateTimeField(source="issued_at")
    total = signed_money(help_text="Tax included; negative for a credit note.")
    tax = signed_money(help_text="The tax in `total`.")
    taxes = DocumentTaxSerializer(many=True, help_text="Per rate: the sums of its lines.")
    currency = serializers.CharField()
    corrects = serializers.CharField(
        source="corrects.number",
        allow_null=True,
        default=None,
        help_text="A credit note: the number of the receipt or invoice it corrects.",
    )
    replaces = serializers.CharField(
        source="replaces.number",
        allow_null=True,
        default=None,
        help_text="An invoice issued anew after its order changed (a group's numbers): the "
        "number of the invoice it replaces, which a credit note cancelled.",
    )
    terms = DocumentTermSerializer(
        many=True, help_text="An invoice paid later (a group's): what is due by when."
    )
    pdfUrl = serializers.SerializerMethodField(help_text="The document as a PDF.")

    def get_pdfUrl(self, document) -> str:
        return reverse(
            "orders-document", kwargs={"orderId": document.order_id, "number": document.number}
        )


class OrderListQuerySerializer(serializers.Serializer):
    startDate = StrictDateField(required=False, help_text="Visits on or after this date.")
    endDate = StrictDateField(required=False, help_text="Visits on or before this date.")
    status = serializers.ChoiceField(choices=OrderStatus.choices, required=False)
    confirmationCode = StrictCharField(
        required=False, max_length=40, help_text="The order's, or any of its tickets'."
    )

    def validate(self, attrs):
        start, end = attrs.get("startDate"), attrs.get("endDate")
        if start and end and end < start:
            raise serializers.ValidationError({"endDate": "Must not be before startDate."})
        return attrs


class PriceQuerySerializer(serializers.Serializer):
    ticketDate = StrictDateField()
    eventId = StrictUUIDField(required=False, help_text="An event's prices; absent: general entry.")


class CategoryPriceSerializer(serializers.Serializer):
    category = serializers.CharField()
    name = serializers.CharField()
    price = MoneyField()
    currency = CurrencyField()


class QuoteLineSerializer(serializers.Serializer):
    category = serializers.CharField(source="code", help_text="Its category, or `member`.")
    quantity = serializers.IntegerField()
    price = MoneyField(help_text="Each ticket's.")
    voucher = serializers.CharField(
        source="voucher.code", required=False, allow_null=True, help_text="Its voucher's code."
    )
    discount = MoneyField(help_text="What the voucher takes off each ticket's price.")

    def to_representation(self, line):
        data = super().to_representation(line)
        if data["voucher"] is None:
            del data["voucher"]
        return data


class QuoteDonationSerializer(serializers.Serializer):
    fund = serializers.IntegerField(source="fund.pk")
    name = serializers.CharField(source="fund.name")
    amount = MoneyField()


class QuoteSerializer(serializers.Serializer):
    lines = QuoteLineSerializer(many=True)
    donations = QuoteDonationSerializer(many=True, help_text="Untaxed, in `total`.")
    total = MoneyField(max_digits=10, help_text="What the order would cost.")
    taxes = serializers.SerializerMethodField(help_text="The tax in `total`, per rate.")
    currency = CurrencyField()

    @extend_schema_field(TaxSerializer(many=True))
    def get_taxes(self, quote):
        lines = [
            (line.taxed.rate, line.price * line.quantity, line.taxed.tax * line.quantity)
            for line in quote.lines
        ]
        lines += [(Decimal("0"), gift.amount, Decimal("0")) for gift in quote.donations]
        return TaxSerializer(totals_by_rate(lines), many=True).data


class PaymentMethod(TextChoices):
    CASH = "cash"
    CARD = "card"


class StartPaymentRequestSerializer(serializers.Serializer):
    provider = serializers.ChoiceField(
        choices=["stripe", "desk", "demo", "giftcard"],
        help_text="`stripe` (a card, completed with Stripe.js and `clientSecret`), `demo` (local "
        "work only: open `payUrl`), `desk` (staff who take payments at the desk: paid at once), "
        "`giftcard` (with `code`: what the card holds, up to what is due, paid at once). Each "
        "pays what is left to pay; the order is confirmed once its payments cover its total.",
    )
    method = serializers.ChoiceField(
        choices=PaymentMethod.choices,
        required=False,
        help_text="The desk: cash or the card terminal.",
    )
    code = StrictCharField(required=False, max_length=40, help_text="A gift card's code.")

    def validate(self, attrs):
        if attrs["provider"] == "giftcard" and not attrs.get("code"):
            raise serializers.ValidationError({"code": _("A gift card's code is needed.")})
        return attrs


class PaymentSerializer(serializers.Serializer):
    paymentId = serializers.UUIDField(source="id")
    provider = serializers.CharField()
    state = serializers.ChoiceField(choices=PaymentState.choices)
    amount = MoneyField(max_digits=10)
    currency = serializers.CharField()
    createdAt = serializers.DateTimeField(source="created_at")
    confirmedAt = serializers.DateTimeField(source="confirmed_at", allow_null=True)
    clientSecret = serializers.CharField(
        source="client_secret",
        allow_null=True,
        help_text="Stripe: what Stripe.js completes the payment with; only in the answer that "
        "started it.",
    )
    payUrl = serializers.CharField(
        source="pay_url",
        allow_null=True,
        help_text="The demo provider: the page that completes the payment, while it is "
        "pending; null once it is not.",
    )


class MembershipTypeSerializer(serializers.Serializer):
    membershipType = serializers.CharField(
        source="code", help_text="The code a purchase names, e.g. 'family'."
    )
    name = serializers.CharField(help_text="In the request's language.")
    description = serializers.CharField()
    price = serializers.SerializerMethodField(help_text="Of a period, tax included.")
    taxRate = TaxRateField(source="tax_rate")
    currency = CurrencyField()
    validityMonths = serializers.IntegerField(source="validity_months")
    admits = serializers.IntegerField(help_text="People one member visit admits.")
    eventDiscountPercent = serializers.IntegerField(
        source="event_discount_percent", help_text="Discount on special events, in %."
    )

    @extend_schema_field(MoneyField())
    def get_price(self, membership_type):
        return MoneyField().to_representation(membership_taxed(membership_type).gross)


class BuyMembershipRequestSerializer(serializers.Serializer):
    membershipType = StrictCharField(max_length=40, help_text="A membership type's code.")
    holderName = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=100,
        help_text="The member's name, printed on the card; none for a gift (its redeemer names "
        "the holder).",
    )
    email = serializers.EmailField(
        max_length=254,
        help_text="Where its email goes: the member's, or for a gift its giver's (the gift code).",
    )
    startDate = StrictDateField(
        required=False,
        help_text="The first valid day: from today to MUSEUM_MEMBERSHIP_MAX_START_DAYS (90) "
        "ahead; by default today. A gift starts when redeemed.",
    )
    gift = StrictBooleanField(required=False, default=False)
    language = LanguageField(
        required=False,
        help_text="What its email and card speak; by default the request's (Accept-Language).",
    )

    # A domain name, as a ticket's buyer's: no mail to a host the buyer chooses.
    validate_email = BuyMuseumTicketsRequestSerializer.validate_email


class RedeemGiftRequestSerializer(serializers.Serializer):
    giftCode = StrictCharField(max_length=40)
    holderName = StrictCharField(max_length=100)
    email = serializers.EmailField(max_length=254)

    validate_email = BuyMuseumTicketsRequestSerializer.validate_email


class MembershipSerializer(serializers.Serializer):
    """A membership as its owner and staff read it; `giftCode` only to them (the request's
    user), and only for a gift. A gift's giver, once another account redeemed it, reads it
    without the holder's data (selectors.may_see_holder): those fields are null."""

    membershipId = serializers.UUIDField(source="id")
    membershipType = serializers.CharField(source="membership_type.code")
    membershipTypeName = serializers.CharField(source="membership_type.name")
    status = serializers.SerializerMethodField(
        help_text="`pending` until paid (a gift: until redeemed); a lapsed one is `expired`."
    )
    validityToday = serializers.SerializerMethodField(
        help_text="Whether it admits today (`valid`) or why not (`pending`, `not_yet_valid`, "
        "`expired`, `cancelled`): the answer the door and a member visit's sale give."
    )
    holderName = serializers.CharField(
        source="holder_name",
        allow_null=True,
        help_text="Null to a gift's giver once another account redeemed it, as are `email`, "
        "`cardCode` and `cardUrl`.",
    )
    email = serializers.CharField(allow_null=True)
    language = serializers.CharField()
    validFrom = serializers.DateField(source="valid_from", allow_null=True)
    validUntil = serializers.DateField(source="valid_until", allow_null=True)
    cardCode = serializers.CharField(source="card_code", allow_null=True)
    cardUrl = serializers.SerializerMethodField(help_text="The member card as a PNG.")
    giftCode = serializers.CharField(
        source="gift_code",
        required=False,
        help_text="A gift's code, to redeem it; only to its buyer and staff.",
    )
    redeemedAt = serializers.DateTimeField(source="redeemed_at", required=False, allow_null=True)
    orderId = serializers.SerializerMethodField(help_text="The order that sold it.")

    @extend_schema_field(serializers.ChoiceField(choices=MembershipStatus.choices))
    def get_status(self, membership) -> str:
        return status_on(membership)

    @extend_schema_field(serializers.ChoiceField(choices=Validity.choices))
    def get_validityToday(self, membership) -> str:
        return membership.validity_on(timezone.localdate())

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_cardUrl(self, membership) -> str:
        path = f"/v1.1/memberships/{membership.pk}/card.png"
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else settings.MUSEUM_PUBLIC_URL + path

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_orderId(self, membership):
        sales = sorted(membership.sales.all(), key=lambda sale: sale.pk)
        return str(sales[0].order_id) if sales else None

    def to_representation(self, membership):
        data = super().to_representation(membership)
        request = self.context.get("request")
        if request is None or not may_see_gift_code(viewer=request.user, membership=membership):
            data.pop("giftCode", None)
        if request is not None and not may_see_holder(viewer=request.user, membership=membership):
            data.update(holderName=None, email=None, cardCode=None, cardUrl=None)
        if data.get("redeemedAt") is None:
            data.pop("redeemedAt", None)
        return data


class SoldMembershipSerializer(MembershipSerializer):
    order = serializers.SerializerMethodField()

    @extend_schema_field(OrderSerializer)
    def get_order(self, membership):
        return OrderSerializer(membership.order).data


class MembershipListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=MembershipStatus.choices, required=False)
    membershipType = StrictCharField(required=False, max_length=40)
    expiringBefore = StrictDateField(required=False, help_text="Valid until this day or before.")
    search = StrictCharField(
        required=False, max_length=100, help_text="In the holder's name, email or card code."
    )
