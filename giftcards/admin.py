"""Gift cards for staff: each card with its balance and its ledger, only read (the services
sell, spend and credit them, under the card's lock)."""

from django.contrib import admin
from django.db.models import Sum

from giftcards.codes import read_code
from giftcards.models import GiftCard, Transaction
from museum.admin import ReadOnlyAdmin
from museum.money import ZERO


class TransactionInline(admin.TabularInline):
    model = Transaction
    extra = 0
    can_delete = False
    fields = readonly_fields = ("at", "kind", "amount", "order", "payment", "by", "reason")

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(GiftCard)
class GiftCardAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "value", "balance", "issued_at", "expires_on", "email"]
    list_filter = ["issued_at", "expires_on"]
    search_fields = ["email"]
    inlines = [TransactionInline]
    exclude = ["code"]
    readonly_fields = ["value", "currency", "order", "buyer", "email", "language", "issued_at"]

    def get_queryset(self, request):
        return (
            super().get_queryset(request).annotate(held=Sum("transactions__amount", default=ZERO))
        )

    @admin.display(ordering="held")
    def balance(self, card):
        return card.held

    def get_search_results(self, request, queryset, search_term):
        # A card is found by its whole code, as typed, never by a part of it.
        code = read_code(search_term)
        if code:
            return queryset.filter(code=code), False
        return super().get_search_results(request, queryset, search_term)
