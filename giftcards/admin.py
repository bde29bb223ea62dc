"""Gift cards for staff: each card with its balance and its ledger, only read (the services
sell, spend and credit them, under the card's lock), and on a card's page "Change the balance":
an amount onto or off it with a reason, through the same service (giftcards.services.adjust),
for staff who may (`giftcards.change_balance`)."""

from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Sum
from django.shortcuts import get_object_or_404, redirect
from django.urls import path

from giftcards import services
from giftcards.codes import read_code
from giftcards.models import GiftCard, Transaction
from museum.admin import ReadOnlyAdmin
from museum.admin_pages import admin_page
from museum.exceptions import MuseumProblem
from museum.money import ZERO

CHANGE_BALANCE = "giftcards.change_balance"


class TransactionInline(admin.TabularInline):
    model = Transaction
    extra = 0
    can_delete = False
    fields = readonly_fields = ("at", "kind", "amount", "order", "payment", "by", "reason")

    def has_add_permission(self, request, obj=None):
        return False


class BalanceChangeForm(forms.Form):
    direction = forms.ChoiceField(
        choices=[("+", "Add to the balance (+)"), ("-", "Take off the balance (-)")],
        widget=forms.RadioSelect,
    )
    amount = forms.DecimalField(
        max_digits=10, decimal_places=2, min_value=Decimal("0.01"), label="Amount"
    )
    reason = forms.CharField(
        max_length=200,
        help_text="Kept in the card's ledger and the audit log, with your name.",
    )

    def signed_amount(self) -> Decimal:
        amount = self.cleaned_data["amount"]
        return -amount if self.cleaned_data["direction"] == "-" else amount


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

    def get_urls(self):
        change_balance = self.admin_site.admin_view(self.change_balance_view)
        return [
            path(
                "<uuid:card_id>/balance/", change_balance, name="giftcards_giftcard_change_balance"
            ),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        may = request.user.has_perm(CHANGE_BALANCE)
        extra_context = {**(extra_context or {}), "may_change_balance": may}
        return super().change_view(request, object_id, form_url, extra_context)

    def change_balance_view(self, request, card_id):
        """The card's balance changed by an amount, with a reason: the service's refusals (not
        issued yet, less on the card than taken off) are the form's errors."""
        if not request.user.has_perm(CHANGE_BALANCE):
            raise PermissionDenied
        card = get_object_or_404(GiftCard, pk=card_id)
        form = BalanceChangeForm(request.POST or None)
        if form.is_valid():
            try:
                move = services.adjust(
                    card_id=card.pk,
                    amount=form.signed_amount(),
                    reason=form.cleaned_data["reason"],
                    by=request.user,
                )
            except MuseumProblem as problem:
                form.add_error(None, str(problem.detail))
            else:
                words = f"{card}: {move.amount:+} with the reason given; it holds {card.balance()}."
                self.message_user(request, words, messages.SUCCESS)
                return redirect("admin:giftcards_giftcard_change", card.pk)
        return admin_page(
            self,
            request,
            "admin/giftcards/giftcard/change_balance.html",
            title=f"Change the balance of {card}",
            form=form,
            card=card,
            balance=card.balance(),
        )
