import re

from django.core.validators import EmailValidator
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from hours.serializers import HourMinuteField
from museum.fields import StrictCharField, StrictDateField, StrictUUIDField
from orders.models import TicketType
from tickets.groups import GroupAdmission
from tickets.members import MemberAdmission

# A plausible international number: an optional +, 7 to 15 digits (E.164's most), and the
# spaces, dots, dashes and parentheses people write between them.
PHONE_SHAPE = re.compile(r"\+?[0-9 ().\-]{7,25}")


class BuyMuseumTicketsRequestSerializer(serializers.Serializer):
    ticketType = serializers.ChoiceField(choices=TicketType.choices, source="ticket_type")
    eventId = StrictUUIDField(
        source="event_id",
        required=False,
        help_text="Required for an event ticket; refused for a general one.",
    )
    ticketDate = StrictDateField(source="ticket_date")
    email = serializers.EmailField(max_length=254)
    phone = StrictCharField(
        required=False, max_length=25, help_text="Optional, e.g. +1 (234) 567-8910."
    )

    def validate_email(self, value):
        # Django's EmailValidator also takes an IP literal (ada@[127.0.0.1], ada@[::1]) and
        # ada@localhost: a purchase would have the mail server deliver to a host its buyer chose,
        # the mail server itself or one on its internal network included. Domain names only.
        if not EmailValidator.domain_regex.match(value.rpartition("@")[2]):
            raise serializers.ValidationError(
                "Enter an email address at a domain name, not an IP address or localhost."
            )
        return value

    def validate_phone(self, value):
        digits = sum(char.isdigit() for char in value)
        if not PHONE_SHAPE.fullmatch(value) or not 7 <= digits <= 15:
            raise serializers.ValidationError(
                "Enter a phone number of 7 to 15 digits, optionally starting with +."
            )
        return value

    def validate(self, attrs):
        is_event = attrs["ticket_type"] == TicketType.EVENT
        if is_event and "event_id" not in attrs:
            raise serializers.ValidationError({"eventId": "Required for an event ticket."})
        if not is_event and "event_id" in attrs:
            raise serializers.ValidationError({"eventId": "Only event tickets name an event."})
        return attrs


# The response serializers declare every field, so they are plain Serializers: a ModelSerializer
# would also inspect the model on every instantiation, for nothing.
class BuyMuseumTicketsResponseSerializer(serializers.Serializer):
    message = serializers.SerializerMethodField()
    ticketId = serializers.UUIDField(source="id")
    ticketType = serializers.CharField(source="ticket_type")
    ticketDate = serializers.DateField(source="date")
    confirmationCode = serializers.CharField(source="confirmation_code")
    eventId = serializers.UUIDField(source="event_id", required=False)
    eventName = serializers.CharField(source="event.name", required=False)

    def get_message(self, ticket) -> str:
        what = "special event" if ticket.is_event_ticket else "general entry"
        if ticket.held:
            # An online account's purchase: the order is held until paid (docs/contract-notes.md).
            until = timezone.localtime(ticket.order.hold_expires_at)
            return (
                f"Museum {what} ticket reserved, awaiting payment until {until:%H:%M}: "
                f"POST /v1.1/orders/{ticket.order_id}/payments"
            )
        if ticket.slot_id is not None:
            entry = f"{ticket.slot.entry_time:%H:%M}"
            return f"Museum {what} ticket purchased, timed entry from {entry}"
        return f"Museum {what} ticket purchased"

    def to_representation(self, ticket):
        # The contract's eventId and eventName are strings when present, never null.
        return {key: value for key, value in super().to_representation(ticket).items() if value}


class CheckInRequestSerializer(serializers.Serializer):
    # `code` is the published API's name for the field (the contract); in Python it is the
    # scanned text, as check_in names it.
    code = StrictCharField(
        source="scanned",
        max_length=400,
        help_text="The scanned QR text, or a confirmation code read aloud.",
    )
    people = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="How many come in: a group's arrivals (by its order's code; default all still "
        "to come) or a member card's walk-ins (default all it still admits today).",
    )


class CheckedInTicketSerializer(serializers.Serializer):
    ticketId = serializers.UUIDField(source="id")
    ticketType = serializers.CharField(source="ticket_type")
    ticketDate = serializers.DateField(source="date")
    confirmationCode = serializers.CharField(source="confirmation_code")
    eventName = serializers.CharField(source="event.name", allow_null=True, default=None)
    checkedInAt = serializers.DateTimeField(source="checked_in_at")
    # What the door page shows besides, for a scanner: the visitor category, whether its proof
    # (age, student card) is to be checked, and a timed ticket's entry slot.
    category = serializers.CharField(source="category.category", allow_null=True, default=None)
    checkAtDoor = serializers.SerializerMethodField()
    entryTime = HourMinuteField(source="slot.entry_time", allow_null=True, default=None)

    def get_checkAtDoor(self, ticket) -> bool:
        # A ticket sold before visitor categories existed has none, and nothing to check.
        return ticket.category is not None and ticket.category.check_at_door


class RefusedTicketSerializer(serializers.Serializer):
    """A ticket of a scanned order the door refused, and why (a refusal's `reason`)."""

    ticketId = serializers.UUIDField(source="ticket.id")
    ticketType = serializers.CharField(source="ticket.ticket_type")
    ticketDate = serializers.DateField(source="ticket.date")
    confirmationCode = serializers.CharField(source="ticket.confirmation_code")
    eventName = serializers.CharField(source="ticket.event.name", allow_null=True, default=None)
    category = serializers.CharField(
        source="ticket.category.category", allow_null=True, default=None
    )
    entryTime = HourMinuteField(source="ticket.slot.entry_time", allow_null=True, default=None)
    reason = serializers.CharField(
        source="code",
        help_text="As a single ticket's 409: `cancelled`, `wrong_day`, `not_paid`, `closed`, "
        "`too_early`, `already_checked_in` or `ticket_changing`.",
    )
    detail = serializers.CharField()
    firstEntryAt = serializers.DateTimeField(
        source="ticket.checked_in_at",
        allow_null=True,
        help_text="When the ticket was first admitted, if it was.",
    )


class MemberEntrySerializer(serializers.Serializer):
    """Whose member card a scan read, and how many people it let in."""

    membershipId = serializers.UUIDField(source="membership.id")
    holderName = serializers.CharField(source="membership.holder_name")
    membershipType = serializers.CharField(source="membership.membership_type.name")
    validUntil = serializers.DateField(source="membership.valid_until")
    people = serializers.IntegerField(help_text="How many people the scan let in.")
    leftToday = serializers.IntegerField(
        source="left_today",
        allow_null=True,
        help_text="Walk-ins: how many more the card admits today; null for a booked visit.",
    )


class GroupEntrySerializer(serializers.Serializer):
    """The group a scan of its order's code admitted: how many now, and of its headcount."""

    groupCode = serializers.CharField(source="group.code")
    organisation = serializers.CharField(source="group.organisation")
    headcount = serializers.IntegerField(help_text="The people it booked.")
    admitted = serializers.IntegerField(help_text="How many the scan let in.")
    arrived = serializers.IntegerField(
        source="group.arrived", help_text="How many of the group have come in, all scans."
    )


# The admitted ticket's fields a member card's walk-ins answer as null: they have no ticket.
_NO_TICKET = dict.fromkeys(CheckedInTicketSerializer().fields)


class CheckInResponseSerializer(CheckedInTicketSerializer):
    """A scan's answer: the contract's fields describe the admitted ticket (for an order's code,
    the first of those admitted; null for a member card's walk-ins, who have none); `admitted`
    lists every ticket the scan admitted, `refused` the order's tickets it did not, and `member`
    the member card it read."""

    ticketId = serializers.UUIDField(source="id", allow_null=True)
    ticketType = serializers.CharField(source="ticket_type", allow_null=True)
    ticketDate = serializers.DateField(source="date", allow_null=True)
    confirmationCode = serializers.CharField(source="confirmation_code", allow_null=True)
    checkedInAt = serializers.DateTimeField(source="checked_in_at", allow_null=True)
    checkAtDoor = serializers.SerializerMethodField(method_name="get_check_at_door")
    orderCode = serializers.CharField(
        allow_null=True, help_text="The scanned order's code; null for a ticket's scan."
    )
    admitted = CheckedInTicketSerializer(many=True)
    refused = RefusedTicketSerializer(many=True)
    member = MemberEntrySerializer(
        allow_null=True, help_text="The member card scanned, if one was; null otherwise."
    )
    group = GroupEntrySerializer(
        allow_null=True, help_text="The group whose order's code was scanned; null otherwise."
    )

    @extend_schema_field(serializers.BooleanField(allow_null=True))
    def get_check_at_door(self, ticket) -> bool | None:
        # Described for the schema only: to_representation answers through the tickets' own.
        return None

    def to_representation(self, admission):
        # The door's every scan: one serializer for the admitted tickets, whose first is the
        # ticket the contract's fields describe, and none for an empty `refused`.
        member = group = None
        if isinstance(admission, GroupAdmission):
            group = GroupEntrySerializer(admission).data
            admission = admission.admission
        if isinstance(admission, MemberAdmission):
            member = MemberEntrySerializer(admission).data
            if admission.admission is None:
                return {
                    **_NO_TICKET,
                    "orderCode": None,
                    "admitted": [],
                    "refused": [],
                    "member": member,
                    "group": None,
                }
            admission = admission.admission
        admitted = CheckedInTicketSerializer(admission.admitted, many=True).data
        refused = (
            RefusedTicketSerializer(admission.refused, many=True).data if admission.refused else []
        )
        return {
            **admitted[0],
            "orderCode": admission.order_code,
            "admitted": admitted,
            "refused": refused,
            "member": member,
            "group": group,
        }


class SigningKeySerializer(serializers.Serializer):
    keyId = serializers.CharField(help_text="Hex id carried in the first 4 bytes of a token.")
    algorithm = serializers.CharField()
    publicKey = serializers.CharField(help_text="Raw 32-byte Ed25519 public key, base64url.")
