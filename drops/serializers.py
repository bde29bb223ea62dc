"""The waiting room's answer: where an account stands in a drop's line (docs/operations.md, "A
blockbuster drop"). It only translates drops.services.Place."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class AdmissionSerializer(serializers.Serializer):
    token = serializers.CharField(
        help_text="Send it as the Queue-Token header of the purchase; it buys once."
    )
    expiresAt = serializers.DateTimeField(source="expires_at")
    maxTickets = serializers.IntegerField(source="max_tickets", help_text="The most it buys.")


class DropPlaceSerializer(serializers.Serializer):
    dropId = serializers.IntegerField(source="drop_id")
    state = serializers.ChoiceField(
        choices=["pending", "waiting", "admitted", "used", "expired", "sold_out", "closed"],
        help_text=(
            "pending: in the waiting room before the sale opens (places are drawn at the "
            "opening); waiting: in line; admitted: buy now with `admission`; used: it bought; "
            "expired: the turn ran out; sold_out: no places left (join the waiting list); "
            "closed: the waiting room has closed."
        ),
    )
    position = serializers.IntegerField(allow_null=True, help_text="Place in line, from 1.")
    ahead = serializers.IntegerField(allow_null=True, help_text="People in line before you.")
    estimatedWaitSeconds = serializers.IntegerField(source="wait_seconds", allow_null=True)
    likelySoldOut = serializers.BooleanField(
        source="likely_sold_out",
        help_text="The places left are fewer than the people before you (each buys one or more).",
    )
    placesLeft = serializers.IntegerField(source="places_left", help_text="-1: not counted.")
    opensAt = serializers.DateTimeField(source="opens_at")
    pollAfterSeconds = serializers.IntegerField(
        source="poll_after", help_text="Ask again after this long (also Retry-After); 0: no need."
    )
    admission = serializers.SerializerMethodField(
        help_text="When your turn has come: what you buy with."
    )

    @extend_schema_field(AdmissionSerializer(allow_null=True))
    def get_admission(self, place) -> dict | None:
        return AdmissionSerializer(place).data if place.token else None


class WaitingListJoinSerializer(serializers.Serializer):
    quantity = serializers.IntegerField(
        min_value=1, help_text="Tickets wanted, at most the drop's most per buyer."
    )


class OfferSerializer(serializers.Serializer):
    voucherCode = serializers.CharField(
        source="code", help_text="Give it as the order's `voucher`; it needs no Queue-Token."
    )
    expiresAt = serializers.DateTimeField(
        source="valid_until", help_text="Until then its places are kept for you."
    )
    quantity = serializers.IntegerField(source="max_uses", help_text="The tickets it buys.")


class WaitingEntrySerializer(serializers.Serializer):
    dropId = serializers.IntegerField(source="drop_id")
    position = serializers.IntegerField(
        help_text="Place on the waiting list, from 1, in the order of joining."
    )
    quantity = serializers.IntegerField()
    joinedAt = serializers.DateTimeField(source="joined_at")
    offer = serializers.SerializerMethodField(
        help_text="Once places are offered to you: the voucher that buys them; else null."
    )

    def get_offer(self, entry) -> OfferSerializer(allow_null=True):  # type: ignore[valid-type]
        return OfferSerializer(entry.voucher).data if entry.voucher is not None else None
