from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from events.models import EventDate, SpecialEvent
from hours.models import EntrySlot, MuseumDay
from hours.serializers import HourMinuteField
from museum.fields import (
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictDateField,
    StrictIntegerField,
)
from orders.models import VisitorCategory, VoucherChannel, VoucherEffect
from orders.serializers import PlaceOrderRequestSerializer, QuoteSerializer

TICKET_TYPES = [("general", "General entry"), ("event", "Special events")]


class VoucherSerializer(serializers.Serializer):
    voucherId = serializers.IntegerField(source="pk")
    code = serializers.CharField()
    effect = serializers.ChoiceField(choices=VoucherEffect.choices)
    value = MoneyField(help_text="The set price, the amount off, or the percentage off.")
    stacks = serializers.BooleanField(help_text="Whether it stacks with a member's discount.")
    ticketType = serializers.CharField(
        source="ticket_type", help_text="`general`, `event`, or empty: both."
    )
    categories = serializers.SerializerMethodField(help_text="Empty: every category.")
    events = serializers.SerializerMethodField(help_text="Empty: every event.")
    visitFrom = serializers.DateField(source="visit_from", allow_null=True)
    visitUntil = serializers.DateField(source="visit_until", allow_null=True)
    entryFrom = HourMinuteField(source="entry_from", allow_null=True)
    entryUntil = HourMinuteField(source="entry_until", allow_null=True)
    channels = serializers.ListField(child=serializers.ChoiceField(choices=VoucherChannel.choices))
    validFrom = serializers.DateTimeField(source="valid_from", allow_null=True)
    validUntil = serializers.DateTimeField(source="valid_until", allow_null=True)
    maxUses = serializers.IntegerField(source="max_uses", allow_null=True)
    uses = serializers.IntegerField(
        source="used", help_text="Tickets held or sold with it, not cancelled."
    )
    budget = MoneyField(max_digits=10, allow_null=True)
    discountGiven = MoneyField(
        source="discounted", max_digits=10, help_text="What those tickets took off their prices."
    )
    keepSlot = serializers.IntegerField(source="keep_slot_id", allow_null=True)
    keepDay = serializers.DateField(source="keep_day", allow_null=True)
    keepEventDate = serializers.IntegerField(source="keep_event_date_id", allow_null=True)
    tag = serializers.CharField()
    comment = serializers.CharField()
    createdAt = serializers.DateTimeField(source="created_at")

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_categories(self, voucher) -> list[str]:
        return sorted(category.category for category in voucher.categories.all())

    @extend_schema_field(serializers.ListField(child=serializers.UUIDField()))
    def get_events(self, voucher) -> list[str]:
        return sorted(str(event.pk) for event in voucher.events.all())


class VoucherSettingsSerializer(serializers.Serializer):
    """What staff set on a voucher (a batch's vouchers share them); PATCH takes any of them."""

    effect = serializers.ChoiceField(choices=VoucherEffect.choices)
    value = MoneyField(required=False, help_text="Unused when free; a percentage at most 100.")
    stacks = StrictBooleanField(required=False)
    # Plain text, not an enum with a blank member: that is a oneOf a generated client trips on.
    ticketType = StrictCharField(
        source="ticket_type",
        required=False,
        allow_blank=True,
        max_length=10,
        help_text="`general`, `event`, or empty: both.",
    )
    categories: serializers.SlugRelatedField[VisitorCategory] = serializers.SlugRelatedField(
        slug_field="category",
        queryset=VisitorCategory.objects.all(),
        many=True,
        required=False,
        help_text="Visitor categories' codes; empty: every category.",
    )
    events: serializers.PrimaryKeyRelatedField[SpecialEvent] = serializers.PrimaryKeyRelatedField(
        queryset=SpecialEvent.objects.all(),
        many=True,
        required=False,
        pk_field=serializers.UUIDField(),
        help_text="Empty: every event.",
    )
    visitFrom = StrictDateField(source="visit_from", required=False, allow_null=True)
    visitUntil = StrictDateField(source="visit_until", required=False, allow_null=True)
    entryFrom = HourMinuteField(source="entry_from", required=False, allow_null=True)
    entryUntil = HourMinuteField(source="entry_until", required=False, allow_null=True)
    channels = serializers.ListField(
        child=serializers.ChoiceField(choices=VoucherChannel.choices),
        required=False,
        min_length=1,
        help_text="Where it may be used; all four when left out.",
    )
    validFrom = serializers.DateTimeField(source="valid_from", required=False, allow_null=True)
    validUntil = serializers.DateTimeField(source="valid_until", required=False, allow_null=True)
    maxUses = StrictIntegerField(source="max_uses", min_value=1, required=False, allow_null=True)
    budget = MoneyField(max_digits=10, required=False, allow_null=True)
    keepSlot = serializers.PrimaryKeyRelatedField(
        source="keep_slot", queryset=EntrySlot.objects.all(), required=False, allow_null=True
    )
    keepDay = StrictDateField(
        source="keep_day",
        required=False,
        allow_null=True,
        help_text="A museum day's date, whose general entry places it keeps.",
    )
    keepEventDate = serializers.PrimaryKeyRelatedField(
        source="keep_event_date", queryset=EventDate.objects.all(), required=False, allow_null=True
    )
    tag = StrictCharField(max_length=60, required=False, allow_blank=True)
    comment = StrictCharField(max_length=2000, required=False, allow_blank=True)

    def validate_ticketType(self, ticket_type):
        if ticket_type not in ("", *(value for value, _label in TICKET_TYPES)):
            raise serializers.ValidationError(_("`general`, `event`, or empty: both."))
        return ticket_type

    def validate_channels(self, channels):
        return list(dict.fromkeys(channels))

    def validate_keepDay(self, day):
        if day is not None and not MuseumDay.objects.filter(date=day).exists():
            raise serializers.ValidationError(_("The museum has no day on that date."))
        return day


class CreateVoucherRequestSerializer(VoucherSettingsSerializer):
    code = StrictCharField(
        max_length=40,
        required=False,
        help_text="Kept upper-case; left out, a new one is made (`prefix` first).",
    )
    prefix = StrictCharField(max_length=20, required=False, allow_blank=True)


class UpdateVoucherRequestSerializer(VoucherSettingsSerializer):
    effect = serializers.ChoiceField(choices=VoucherEffect.choices, required=False)


class VoucherBatchRequestSerializer(VoucherSettingsSerializer):
    count = StrictIntegerField(
        min_value=1,
        max_value=settings.MUSEUM_VOUCHER_BATCH_MAX,
        required=False,
        help_text="How many new codes; left out: one for each of `codes` or `emails`.",
    )
    prefix = StrictCharField(max_length=20, required=False, allow_blank=True)
    codes = serializers.ListField(
        child=StrictCharField(max_length=40),
        required=False,
        min_length=1,
        max_length=settings.MUSEUM_VOUCHER_BATCH_MAX,
        help_text="The codes to make, rather than new ones.",
    )
    emails = serializers.ListField(
        child=serializers.EmailField(max_length=254),
        required=False,
        max_length=settings.MUSEUM_VOUCHER_BATCH_MAX_EMAILS,
        help_text="One code mailed to each address, in the museum's language.",
    )

    def validate(self, data):
        if "codes" in data and "count" in data:
            raise serializers.ValidationError({"count": [_("Either codes or count.")]})
        if not any(name in data for name in ("codes", "count", "emails")):
            raise serializers.ValidationError(
                {"count": [_("How many codes: count, codes or emails.")]}
            )
        return data


class VoucherBatchSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    codes = serializers.ListField(child=serializers.CharField())
    emailed = serializers.IntegerField(help_text="How many of them are being mailed.")


class VouchersImportedSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    codes = serializers.ListField(child=serializers.CharField())


class VoucherListQuerySerializer(serializers.Serializer):
    tag = serializers.CharField(required=False, allow_blank=True, help_text="Exactly this tag.")
    code = serializers.CharField(required=False, help_text="Codes containing this, in any case.")


class VoucherStatsQuerySerializer(serializers.Serializer):
    tag = serializers.CharField(required=False, allow_blank=True)


class VoucherTagStatsSerializer(serializers.Serializer):
    tag = serializers.CharField()
    issued = serializers.IntegerField(help_text="Codes made.")
    used = serializers.IntegerField(help_text="Codes used at least once.")
    uses = serializers.IntegerField(help_text="Tickets held or sold with them, not cancelled.")
    discount = MoneyField(max_digits=12, help_text="The discount they gave.")


@extend_schema_field({"type": "string", "format": "binary"})
class CsvFileField(serializers.FileField):
    pass


class VoucherImportRequestSerializer(serializers.Serializer):
    file = CsvFileField(help_text="The CSV file, as export.csv writes it.")


class VoucherCheckRequestSerializer(PlaceOrderRequestSerializer):
    """The order as POST /orders takes it, less what a quote does not read (a field set to None
    is DRF's way of leaving an inherited one out), and its voucher."""

    email = None  # type: ignore[assignment]
    phone = None  # type: ignore[assignment]
    name = None  # type: ignore[assignment]
    language = None  # type: ignore[assignment]
    hold = None  # type: ignore[assignment]
    invoice = None  # type: ignore[assignment]
    dryRun = None  # type: ignore[assignment]
    voucher = StrictCharField(
        max_length=40,
        help_text="The code to check: for every line it applies to (a line's own `voucher` "
        "wins for that line).",
    )


class VoucherCheckSerializer(serializers.Serializer):
    voucher = serializers.CharField(help_text="The code, as kept (upper-case).")
    applies = serializers.BooleanField(help_text="Always true: a code that does not is a 409.")
    quote = QuoteSerializer(help_text="What the order would cost with it; nothing is taken.")


class VoucherRedeemedEventSerializer(serializers.Serializer):
    """A voucher's use by a confirmed order as the `voucher.redeemed` webhook tells it (from the
    audit record the sale writes: orders.services.vouchers.record_redeemed)."""

    voucherId = serializers.IntegerField()
    code = serializers.CharField()
    tag = serializers.CharField()
    orderId = serializers.UUIDField()
    uses = serializers.IntegerField(help_text="The order's tickets it reduced.")
    discount = MoneyField(max_digits=10, help_text="What it took off them, in all.")
    currency = serializers.CharField(default=settings.MUSEUM_CURRENCY)
