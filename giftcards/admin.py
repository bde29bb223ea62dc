"""Gift cards for staff: each card with its balance and its ledger, only read (the services
sell, spend and credit them, under the card's lock)."""

from django.contrib import admin, messages
from django.db.models import Sum

from giftcards import services
from giftcards.codes import read_code
from giftcards.models import GiftCard, Transaction
from museum.admin import ReadOnlyAdmin
from museum.exceptions import MuseumProblem
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

    actions = ["pay_back_instead"]

    @admin.action(
        description="Pay its refunds back through the original payments instead",
        permissions=["pay_back"],
    )
    def pay_back_instead(self, request, queryset):
        for card in queryset:
            try:
                services.pay_back_instead(card_id=card.pk, by=request.user)
            except MuseumProblem as problem:
                self.message_user(request, f"{card}: {problem.detail}", messages.WARNING)
            else:
                self.message_user(request, f"{card}: paid back instead", messages.SUCCESS)

    def has_pay_back_permission(self, request):
        return request.user.has_perm("orders.cancel_any_order")

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
