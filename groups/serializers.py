"""The group requests' API shapes (docs/groups.md): what a request takes, what staff's answers
and a change of numbers take, and the request as every read answers it (and its webhooks tell
it), and the tour programmes a group may book. They only translate; the rules are
groups.services'."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from groups.models import FeePer, GroupStatus, OrganisationKind
from hours.serializers import HourMinuteField
from museum.fields import MoneyField, StrictCharField, StrictDateField, StrictIntegerField
from orders.serializers import CurrencyField, LanguageField
from tickets.serializers import BuyMuseumTicketsRequestSerializer

# The most alternatives a request names, and categories it brings.
MAX_ALTERNATIVES = 5
MAX_LINES = 10


class GroupLineSerializer(serializers.Serializer):
    category = StrictCharField(max_length=40, help_text="A visitor category's code, e.g. 'pupil'.")
    quantity = StrictIntegerField(min_value=1, help_text="People of this category.")


class GroupAlternativeSerializer(serializers.Serializer):
    date = StrictDateField()
    time = HourMinuteField(
        required=False, allow_null=True, help_text="An entry time (HH:MM); null: any."
    )


def lines_of(lines: list[dict]) -> dict[str, int]:
    """The lines as the services take them: people per category's code, each category once."""
    per_category: dict[str, int] = {}
    for index, line in enumerate(lines):
        if line["category"] in per_category:
            raise serializers.ValidationError(
                {f"lines.{index}.category": [_("Each category once.")]}
            )
        per_category[line["category"]] = line["quantity"]
    return per_category


class GroupLinesField(serializers.ListField):
    def __init__(self, **kwargs):
        super().__init__(child=GroupLineSerializer(), min_length=1, max_length=MAX_LINES, **kwargs)


class RequestGroupRequestSerializer(serializers.Serializer):
    organisation = StrictCharField(max_length=200, help_text="The school, company or association.")
    organisationKind = serializers.ChoiceField(
        source="organisation_kind", choices=OrganisationKind.choices
    )
    contactName = StrictCharField(source="contact_name", max_length=100)
    email = serializers.EmailField(max_length=254, help_text="Where the group's emails go.")
    phone = StrictCharField(required=False, allow_blank=True, max_length=32)
    language = LanguageField(
        required=False,
        help_text="The language of the group's emails, invoice and tour; by default the "
        "request's (Accept-Language).",
    )
    date = StrictDateField(help_text="The day wished for.")
    entryTime = HourMinuteField(
        source="entry_time",
        required=False,
        allow_null=True,
        help_text="Its entry slot on a day with timed entry (HH:MM).",
    )
    alternatives = serializers.ListField(
        child=GroupAlternativeSerializer(),
        required=False,
        max_length=MAX_ALTERNATIVES,
        help_text="Other days and times that would suit.",
    )
    lines = GroupLinesField(help_text="How many people of each category.")
    ageGroup = StrictCharField(
        source="age_group", required=False, allow_blank=True, max_length=100,
        help_text="Age or school year.",
    )  # fmt: skip
    accessibility = StrictCharField(required=False, allow_blank=True, max_length=2000)
    tourId = StrictIntegerField(
        source="tour_id",
        required=False,
        allow_null=True,
        min_value=1,
        help_text="A guided tour from the museum's programmes.",
    )
    comment = StrictCharField(required=False, allow_blank=True, max_length=2000)
    invoiceAddress = StrictCharField(
        source="address", required=False, allow_blank=True, max_length=500
    )
    vatId = StrictCharField(source="vat_id", required=False, allow_blank=True, max_length=40)

    validate_email = BuyMuseumTicketsRequestSerializer.validate_email

    def validate(self, attrs):
        attrs["lines"] = lines_of(attrs["lines"])
        attrs["alternatives"] = [
            {
                "date": one["date"].isoformat(),
                "time": one["time"].strftime("%H:%M") if one.get("time") else None,
            }
            for one in attrs.get("alternatives", [])
        ]
        return attrs


class ApproveGroupRequestSerializer(serializers.Serializer):
    date = StrictDateField(
        required=False, help_text="Approve it at another day: its places move there first."
    )
    entryTime = HourMinuteField(
        source="entry_time", required=False, allow_null=True, help_text="With `date`."
    )
    tourId = StrictIntegerField(
        source="tour_id",
        required=False,
        min_value=1,
        help_text="Another tour programme than the one asked for.",
    )
    guideIds = serializers.ListField(
        source="guide_ids",
        child=StrictIntegerField(min_value=1),
        required=False,
        max_length=20,
        help_text="The guides asked to lead its tour.",
    )


class OfferGroupTimeRequestSerializer(serializers.Serializer):
    date = StrictDateField()
    entryTime = HourMinuteField(source="entry_time", required=False, allow_null=True)
    message = StrictCharField(
        required=False, allow_blank=True, max_length=2000, help_text="Staff's words to the group."
    )


class DeclineGroupRequestSerializer(serializers.Serializer):
    reason = StrictCharField(max_length=2000, help_text="Told to the group.")


class CancelGroupVisitRequestSerializer(serializers.Serializer):
    reason = StrictCharField(required=False, allow_blank=True, max_length=500, default="")


class GroupNumbersRequestSerializer(serializers.Serializer):
    lines = GroupLinesField(help_text="The group's people now, every category it brings.")

    def validate(self, attrs):
        attrs["lines"] = lines_of(attrs["lines"])
        return attrs


class GroupPaymentRequestSerializer(serializers.Serializer):
    amount = MoneyField(max_digits=10, help_text="What the group paid.")
    method = StrictCharField(
        required=False,
        max_length=20,
        default="bank_transfer",
        help_text="How: `bank_transfer` by default.",
    )


class GroupTourSerializer(serializers.Serializer):
    tourId = serializers.IntegerField(source="pk")
    name = serializers.CharField()


class GroupRequestSerializer(serializers.Serializer):
    """A group's request, and once approved its visit: its group order and invoice's terms."""

    id = serializers.IntegerField(source="pk")
    code = serializers.CharField()
    status = serializers.ChoiceField(choices=GroupStatus.choices)
    organisation = serializers.CharField()
    organisationKind = serializers.CharField(source="organisation_kind")
    contactName = serializers.CharField(source="contact_name")
    email = serializers.EmailField()
    phone = serializers.CharField()
    language = serializers.CharField()
    date = serializers.DateField()
    entryTime = HourMinuteField(source="entry_time", allow_null=True)
    alternatives = serializers.ListField(child=GroupAlternativeSerializer())
    lines = serializers.SerializerMethodField()
    headcount = serializers.SerializerMethodField(help_text="Its people, all categories.")
    placesHeld = serializers.IntegerField(
        source="places", help_text="Places it holds while it waits (0 once answered)."
    )
    expiresAt = serializers.DateTimeField(
        source="expires_at", allow_null=True, help_text="When it expires unanswered."
    )
    ageGroup = serializers.CharField(source="age_group")
    accessibility = serializers.CharField()
    tour = GroupTourSerializer(allow_null=True)
    comment = serializers.CharField()
    message = serializers.CharField(help_text="Staff's words: about the time offered, or why not.")
    createdAt = serializers.DateTimeField(source="created_at")
    answeredAt = serializers.DateTimeField(source="answered_at", allow_null=True)
    orderCode = serializers.SerializerMethodField(help_text="Approved: its group order's code.")
    estimate = serializers.SerializerMethodField(
        help_text="Waiting: what it would cost as it stands (group rates, free chaperones, its "
        "tour's fee), the price approval invoices. In the answer of one request only (null in "
        "a list), and null once approved (see `total`)."
    )
    total = serializers.SerializerMethodField(help_text="Approved: what its invoice asks.")
    due = serializers.SerializerMethodField(help_text="Approved: what is left to pay.")
    deposit = MoneyField(max_digits=10, allow_null=True)
    depositDue = serializers.DateField(source="deposit_due", allow_null=True)
    balanceDue = serializers.DateField(source="balance_due", allow_null=True)
    finalNumbersDate = serializers.DateField(
        source="final_numbers_date",
        allow_null=True,
        help_text="Until this day its numbers change freely.",
    )
    arrived = serializers.IntegerField(allow_null=True, help_text="How many came.")
    noShow = serializers.BooleanField(source="no_show")
    currency = CurrencyField()

    @extend_schema_field(GroupLineSerializer(many=True))
    def get_lines(self, group) -> list[dict]:
        return [
            {"category": line.category.category, "quantity": line.quantity}
            for line in group.lines.all()
        ]

    def get_headcount(self, group) -> int:
        return group.headcount

    def get_orderCode(self, group) -> str | None:
        return group.order.confirmation_code if group.order_id else None

    @extend_schema_field(MoneyField(max_digits=10, allow_null=True))
    def get_estimate(self, group):
        estimate = getattr(group, "estimate", None)
        return None if estimate is None else _amount(estimate)

    @extend_schema_field(MoneyField(max_digits=10, allow_null=True))
    def get_total(self, group):
        return _amount(group.order.total) if group.order_id else None

    @extend_schema_field(MoneyField(max_digits=10, allow_null=True))
    def get_due(self, group):
        return _amount(group.order.due) if group.order_id else None


def _amount(value):
    return MoneyField(max_digits=10).to_representation(value)


class GroupRequestListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=GroupStatus.choices, required=False)


class TourProgrammeSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="As a group request's `tourId` names it.")
    name = serializers.CharField()
    description = serializers.CharField()
    durationMinutes = serializers.IntegerField(source="duration_minutes")
    languages = serializers.SerializerMethodField(help_text="The languages it is led in.")
    audiences = serializers.SerializerMethodField(help_text="The organisations it is for.")
    maxPeoplePerGuide = serializers.IntegerField(
        source="max_people_per_guide",
        help_text="A group needs one guide per this many people or part of it.",
    )
    fee = MoneyField(help_text="Per tour or per guide (`feePer`), beside admission.")
    feePer = serializers.ChoiceField(source="fee_per", choices=FeePer.values)
    currency = CurrencyField()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_languages(self, tour) -> list[str]:
        return list(tour.languages)

    @extend_schema_field(
        serializers.ListField(child=serializers.ChoiceField(choices=OrganisationKind.values))
    )
    def get_audiences(self, tour) -> list[str]:
        return list(tour.audiences)
