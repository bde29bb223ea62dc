"""Gift cards for staff: each card with its balance and its ledger, only read (the services
sell, spend and credit them, under the card's lock); on a card's page "Change the balance": an
amount onto or off it with a reason, through the same service (giftcards.services.adjust), for
staff who may (`giftcards.change_balance`); and beside the list, the reports (giftcards.reports)
with their CSV files."""

from datetime import date, timedelta
from decimal import Decimal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Sum
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import path
from django.utils import timezone

from giftcards import reports, services
from giftcards.codes import read_code
from giftcards.models import GiftCard, Transaction
from museum.admin import ReadOnlyAdmin
from museum.admin_pages import Table, admin_page, csv_response, report_cells
from museum.exceptions import MuseumProblem
from museum.forms import DATE_INPUT
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

    def get_urls(self):
        change_balance = self.admin_site.admin_view(self.change_balance_view)
        reports_page = self.admin_site.admin_view(self.reports_view)
        return [
            path("reports/", reports_page, name="giftcards_giftcard_reports"),
            path(
                "<uuid:card_id>/balance/", change_balance, name="giftcards_giftcard_change_balance"
            ),
            *super().get_urls(),
        ]

    def reports_view(self, request):
        """The liability at a day, the moves per month and the expired balances per year of
        expiry; with ?format=csv&table=<name>, that table as a file."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        today = timezone.localdate()
        day, first, last = today, (today.replace(day=1) - timedelta(days=330)).replace(day=1), today
        form = ReportForm(request.GET or None)
        if form.is_valid():
            day = form.cleaned_data["day"] or day
            first = form.cleaned_data["first"] or first
            last = form.cleaned_data["last"] or last
        form = ReportForm({"day": day, "first": first, "last": last})
        tables = report_tables(day=day, first=first, last=last, today=today)
        if request.GET.get("format") == "csv":
            name = request.GET.get("table", "")
            if name not in tables:
                raise Http404
            rows = [*tables[name].rows, tables[name].total]
            return csv_response(f"gift-cards-{name}-{day}.csv", tables[name].header, rows)
        return admin_page(
            self,
            request,
            "admin/giftcards/giftcard/reports.html",
            title="Gift card reports",
            form=form,
            day=day,
            first=first,
            last=last,
            tables=tables,
        )

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


class ReportForm(forms.Form):
    day = forms.DateField(label="Balances at the end of", required=False, widget=DATE_INPUT)
    first = forms.DateField(label="Months from", required=False, widget=DATE_INPUT)
    last = forms.DateField(label="to", required=False, widget=DATE_INPUT)


MOVES = [("issued", "Issued"), ("redeemed", "Redeemed"), ("credited", "Credited back")]
MOVES.append(("adjusted", "Adjusted by staff"))


def report_tables(*, day: date, first: date, last: date, today: date) -> dict[str, Table]:
    """The reports' tables by the name their CSV is asked for, each amount in MUSEUM_CURRENCY
    (its headers name it)."""
    money = f"({settings.MUSEUM_CURRENCY})"
    owed = reports.liability(day=day)
    months = reports.per_month(first=first, last=last)
    years = reports.expired_per_year(today=today)
    return {
        "liability": Table(
            title=f"Outstanding balances at the end of {day:%d %B %Y}: the museum's liability",
            header=["Cards", "Number", f"Balance {money}"],
            rows=[
                report_cells("Spendable that day", owed.active_cards, owed.active),
                report_cells("Expired by then", owed.expired_cards, owed.expired),
            ],
            total=report_cells("Total", owed.active_cards + owed.expired_cards, owed.total),
        ),
        "ledger": Table(
            title=f"What makes it: every move of the cards' ledgers to the end of {day:%d %B %Y}",
            header=["Move", f"Amount {money}"],
            rows=[report_cells(words, owed.by_kind[kind]) for kind, words in MOVES],
            total=report_cells("Total", sum(owed.by_kind.values(), ZERO)),
        ),
        "months": Table(
            title="Issued and redeemed per month",
            header=[
                "Month",
                "Cards issued",
                f"Issued {money}",
                f"Redeemed {money}",
                f"Credited back {money}",
                f"Adjusted {money}",
                f"Net {money}",
            ],
            rows=[report_cells(f"{line.month:%Y-%m}", *_month_sums([line])) for line in months],
            total=report_cells("Total", *_month_sums(months)),
        ),
        "expired": Table(
            title=f"Expired balances per year of expiry (cards expired by {today:%d %B %Y})",
            header=["Year of expiry", "Cards", f"Held when expired {money}", f"Holds now {money}"],
            rows=[
                report_cells(str(line.year), line.cards, line.at_expiry, line.now) for line in years
            ],
            total=report_cells(
                "Total",
                sum(line.cards for line in years),
                sum((line.at_expiry for line in years), ZERO),
                sum((line.now for line in years), ZERO),
            ),
        ),
    }


def _month_sums(lines: list[reports.MonthLine]) -> list:
    sums: list = [sum(line.cards_issued for line in lines)]
    for name in ("issued", "redeemed", "credited", "adjusted", "net"):
        sums.append(sum((getattr(line, name) for line in lines), ZERO))
    return sums
