from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from giftcards.models import GiftCard, GiftCardStatus, Transaction, TransactionKind
from museum.fields import MoneyField, StrictCharField
from orders.serializers import LanguageField, OrderSerializer
from tickets.serializers import BuyMuseumTicketsRequestSerializer


class BuyGiftCardRequestSerializer(serializers.Serializer):
    amount = MoneyField(
        max_digits=10,
        help_text="What it holds: MUSEUM_GIFT_CARD_MIN to MUSEUM_GIFT_CARD_MAX (5 to 500).",
    )
    email = serializers.EmailField(max_length=254, help_text="Where the card is sent.")
    language = LanguageField(required=False, help_text="What its email and card speak.")

    validate_email = BuyMuseumTicketsRequestSerializer.validate_email


class GiftCardCodeSerializer(serializers.Serializer):
    code = StrictCharField(
        max_length=40, help_text="As printed, in any case, with or without its hyphens."
    )


class TransactionSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=TransactionKind.choices)
    amount = MoneyField(max_digits=10, min_value=None, help_text="Onto the card (+) or off it (-).")
    at = serializers.DateTimeField()
    orderId = serializers.UUIDField(source="order_id", allow_null=True)


class GiftCardSerializer(serializers.Serializer):
    giftCardId = serializers.UUIDField(source="id")
    code = serializers.SerializerMethodField(help_text="Null until its order is paid.")
    value = MoneyField(max_digits=10, help_text="What it was sold for.")
    balance = serializers.SerializerMethodField(help_text="What it holds: the sum of its ledger.")
    currency = serializers.CharField()
    status = serializers.SerializerMethodField(
        help_text="`pending` until paid, then `active`, then `expired` after `expiresOn`."
    )
    issuedAt = serializers.DateTimeField(source="issued_at", allow_null=True)
    expiresOn = serializers.DateField(source="expires_on", allow_null=True)
    orderId = serializers.UUIDField(source="order_id", allow_null=True)
    transactions = serializers.SerializerMethodField()

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_code(self, card) -> str | None:
        return card.code if card.issued_at else None

    @extend_schema_field(MoneyField(max_digits=10))
    def get_balance(self, card):
        return MoneyField().to_representation(card.balance())

    @extend_schema_field(serializers.ChoiceField(choices=GiftCardStatus.choices))
    def get_status(self, card) -> str:
        return card.status_on(timezone.localdate())

    @extend_schema_field(TransactionSerializer(many=True))
    def get_transactions(self, card):
        moves = Transaction.objects.filter(card=card).order_by("at", "pk")
        return TransactionSerializer(moves, many=True).data


class SoldGiftCardSerializer(GiftCardSerializer):
    order = serializers.SerializerMethodField()

    @extend_schema_field(OrderSerializer)
    def get_order(self, card: GiftCard):
        return OrderSerializer(card.order).data


class BalanceSerializer(serializers.Serializer):
    balance = MoneyField(max_digits=10)
    currency = serializers.CharField(default=settings.MUSEUM_CURRENCY)
    expiresOn = serializers.DateField(source="expires_on")
    status = serializers.ChoiceField(choices=GiftCardStatus.choices)


class TransactionEventSerializer(serializers.Serializer):
    """A move of a card's ledger as a webhook tells it: never the card's code, only its last
    four characters."""

    giftCardId = serializers.UUIDField(source="card_id")
    codeEnd = serializers.SerializerMethodField(
        help_text="The last four characters of the card's code: the code itself spends the card."
    )
    transactionId = serializers.IntegerField(source="pk")
    kind = serializers.ChoiceField(choices=TransactionKind.choices)
    amount = MoneyField(max_digits=10, min_value=None, help_text="Onto the card (+) or off it (-).")
    balanceAfter = MoneyField(
        source="balance_after", max_digits=10, help_text="What the card holds after it."
    )
    currency = serializers.CharField(source="card.currency")
    orderId = serializers.UUIDField(
        source="order_id", allow_null=True, help_text="The order it sold, paid or paid back."
    )
    paymentId = serializers.UUIDField(source="payment_id", allow_null=True)
    reason = serializers.CharField(help_text="Staff's reason for a change; empty otherwise.")
    at = serializers.DateTimeField()
    expiresOn = serializers.DateField(source="card.expires_on", allow_null=True)

    def get_codeEnd(self, move) -> str:
        return move.card.code[-4:]
