"""The front desk: staff sell to the visitor in front of them, take cash or card, find an order
and reprint, resend, move or cancel it, and see today's arrivals and takings.

A thin face over the same services as the API (place_order, start_payment, cancel_order,
move_order...): the desk cannot sell what the API would refuse. Staff sign in through the admin's
login; every form carries Django's CSRF token. A form refused as bad input shows its page again
with the errors, as a 400; the museum's refusals (museum.exceptions) show as the form's or the
page's error; an order nobody may see is Django's 404.
"""

import json
import uuid
from datetime import date

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_date
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from events.models import SpecialEvent
from giftcards import services as giftcard_services
from giftcards.provider import GIFT_CARD
from museum.exceptions import MuseumProblem, NotFound
from museum.forms import DATE_INPUT
from museum.i18n import money
from orders import documents, receipts, selectors
from orders.exceptions import NotPaid, VoucherNotApplicable
from orders.models import (
    Channel,
    DocumentKind,
    Fund,
    Order,
    OrderStatus,
    PaymentState,
    SaleDocument,
    TicketState,
    TicketType,
)
from orders.providers import DESK, SELL_AT_DESK, SELL_ON_ACCOUNT
from orders.services import donations as giving
from orders.services.cancellation import cancel_order
from orders.services.changes import move_order, pay_out_at_desk, resend_confirmation
from orders.services.payments import needs_payment, refund_due, start_payment
from orders.services.pricing import active_categories, category_price
from orders.services.sale import place_order, quote_order
from orders.services.taxes import donations_of
from orders.services.vouchers import reason_text
from wallet.links import wallet_links

TIME_INPUT = forms.TimeInput(format="%H:%M", attrs={"type": "time"})
# What the desk takes itself (its provider, orders.providers.DESK), and a partner's account.
DESK_PAYMENTS = [("cash", gettext_lazy("Cash")), ("card", gettext_lazy("Card terminal"))]
PAYMENTS = [*DESK_PAYMENTS, ("partner", gettext_lazy("On a partner's account"))]


def desk_only(view):
    """Signed in through the admin's login, with the front desk's permission."""

    @login_required(login_url="admin:login")
    def guarded(request, *args, **kwargs):
        if not request.user.has_perm(SELL_AT_DESK):
            raise PermissionDenied("The desk is for staff who sell at the front desk.")
        try:
            return view(request, *args, **kwargs)
        except NotFound:
            raise Http404() from None

    guarded.__name__ = view.__name__
    return guarded


def visitor_languages() -> list[tuple[str, str]]:
    """The offered languages, each in its own name: what the visitor's tickets and email speak."""
    return [(code, settings.SHIPPED_LANGUAGES[code]) for code in settings.MUSEUM_LANGUAGES]


def partners():
    return (
        get_user_model()
        .objects.filter(groups__permissions__codename=SELL_ON_ACCOUNT.split(".")[1])
        .order_by("username")
    )


class SaleForm(forms.Form):
    ticket_date = forms.DateField(label="Day", widget=DATE_INPUT)
    entry_time = forms.TimeField(
        label="Entry slot", required=False, widget=TIME_INPUT, help_text="On a timed day."
    )
    event = forms.ModelChoiceField(
        queryset=SpecialEvent.objects.active().order_by("name"),
        required=False,
        empty_label="General entry",
    )
    email = forms.EmailField(required=False, help_text="To email the tickets as well.")
    name = forms.CharField(max_length=100, required=False)
    # Choices and default set per form: the settings may change (tests, a deployment).
    language = forms.ChoiceField(
        label="Visitor's language",
        required=False,
        help_text="What the tickets and the email speak.",
    )
    voucher = forms.CharField(
        label=gettext_lazy("Voucher code"),
        required=False,
        max_length=40,
        help_text=gettext_lazy("For the tickets it applies to; Price shows what it makes."),
    )
    # A donation beside the tickets (orders.services.donations checks the fund and amount).
    fund: forms.ModelChoiceField[Fund] = forms.ModelChoiceField(
        label=gettext_lazy("Donation to"),
        queryset=Fund.objects.none(),
        required=False,
        empty_label=gettext_lazy("No donation"),
    )
    donation = forms.DecimalField(
        label=gettext_lazy("Donation"), required=False, min_value=0, max_digits=8, decimal_places=2
    )
    payment = forms.ChoiceField(choices=PAYMENTS, widget=forms.RadioSelect, initial="cash")
    gift_card = forms.CharField(
        label=gettext_lazy("Gift card code"),
        required=False,
        max_length=40,
        help_text=gettext_lazy("Paid first from the card; the rest in cash or by card."),
    )
    tendered = forms.DecimalField(
        label=gettext_lazy("Amount handed over"),
        required=False,
        min_value=0,
        max_digits=10,
        decimal_places=2,
    )
    partner = forms.ModelChoiceField(queryset=get_user_model().objects.none(), required=False)
    # A business buying (a school, a company): its invoice instead of a receipt.
    company = forms.CharField(label=gettext_lazy("Company"), max_length=200, required=False)
    address = forms.CharField(label=gettext_lazy("Address"), max_length=500, required=False)
    vat_id = forms.CharField(label=gettext_lazy("VAT id"), max_length=40, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["partner"].queryset = partners()  # type: ignore[attr-defined]
        self.fields["fund"].queryset = giving.active_funds()  # type: ignore[attr-defined]
        language = self.fields["language"]
        language.choices = visitor_languages()  # type: ignore[attr-defined]
        language.initial = settings.MUSEUM_LANGUAGE
        self.categories = list(active_categories())
        events = list(self.fields["event"].queryset)  # type: ignore[attr-defined]
        for category in self.categories:
            # Each visitor's price, general ("") and per event: the page's script adds the
            # total up as quantities are typed (the sale itself prices on the server).
            prices = {"": category_price(category=category, event=None)} | {
                str(event.pk): category_price(category=category, event=event) for event in events
            }
            self.fields[f"qty_{category.category}"] = forms.IntegerField(
                label=category.name,
                min_value=0,
                max_value=settings.MUSEUM_DESK_MAX_TICKETS_PER_ORDER,
                initial=0,
                required=False,
                widget=forms.NumberInput(
                    attrs={
                        "class": "quantity",
                        "data-prices": json.dumps({k: str(v) for k, v in prices.items()}),
                    }
                ),
            )
        if self.categories:  # the desk starts on the first visitor's quantity
            first = self.fields[f"qty_{self.categories[0].category}"]
            first.widget.attrs["autofocus"] = True

    def quantity_fields(self):
        return [self[f"qty_{category.category}"] for category in self.categories]

    def clean(self):
        data = super().clean() or {}
        data["lines"] = [
            {"category": category.category, "quantity": data.get(f"qty_{category.category}")}
            for category in self.categories
            if data.get(f"qty_{category.category}")
        ]
        if not data["lines"]:
            raise forms.ValidationError(_("Choose at least one visitor."))
        if data.get("payment") == "partner" and not data.get("partner"):
            self.add_error("partner", _("Choose the partner whose account pays."))
        if (data.get("address") or data.get("vat_id")) and not data.get("company"):
            self.add_error("company", _("Name the company the invoice is for."))
        if data.get("donation") and not data.get("fund"):
            self.add_error("fund", _("Choose the fund the donation goes to."))
        return data

    def invoice(self) -> dict | None:
        """The business's invoice details, if the sale names one."""
        data = self.cleaned_data
        if not data.get("company"):
            return None
        return {
            "company": data["company"],
            "address": data.get("address", ""),
            "vat_id": data.get("vat_id", ""),
        }

    def sale(self) -> dict:
        data = self.cleaned_data
        event = data.get("event")
        return {
            "ticket_type": TicketType.EVENT if event else TicketType.GENERAL,
            "ticket_date": data["ticket_date"],
            "lines": data["lines"],
            "event_id": event.pk if event else None,
            "entry_time": None if event else data.get("entry_time"),
            "voucher": data.get("voucher") or None,
            "donations": donations_of_form(data),
        }


def donations_of_form(data: dict) -> list[dict]:
    """A desk form's fund and amount as an order's donation lines (none without an amount)."""
    if not (data.get("fund") and data.get("donation")):
        return []
    return [{"fund": data["fund"].pk, "amount": data["donation"]}]


def _page(request, template: str, context: dict, *, status: int = 200):
    return render(
        request, template, {"museum_name": settings.MUSEUM_NAME, **context}, status=status
    )


def words(problem: MuseumProblem) -> str:
    """A refusal in a clerk's words: an invalid value's message without the API's field name
    (`entryTime: ...`)."""
    errors = getattr(problem, "errors", None)
    if errors:
        return " ".join(str(message) for messages in errors.values() for message in messages)
    if isinstance(problem, VoucherNotApplicable):  # staff are told why
        return reason_text(problem.reason)
    return str(problem.detail)


def picker(*, day, event_id=None, chosen: str | None = None) -> dict:
    """The slot picker's context (desk/slots.html): the day's entry slots as buttons
    with their places left, or why there are none; the chosen one, else the next with room."""
    choices = selectors.entry_choices(day=day, event_id=event_id) if day else None
    if choices is not None and chosen not in {c.value for c in choices.choices if c.open}:
        chosen = choices.first_open
    return {"choices": choices, "chosen": chosen, "name": "entry_time", "day": day}


@desk_only
@require_http_methods(["GET"])
def slots(request):
    """The slot picker for another day or event, which the page's script swaps in."""
    event_id = _uuid(request.GET.get("event"))
    day = _date(request.GET.get("ticket_date"))
    context = picker(day=day, event_id=event_id, chosen=request.GET.get("chosen"))
    return render(request, "desk/slots.html", context)


@desk_only
@require_http_methods(["GET"])
def today(request):
    day, query = timezone.localdate(), request.GET.get("q", "")
    found = selectors.find_orders(query=query)
    if len(found) == 1:  # the visitor's code: straight to their order
        return redirect("desk-order", order_id=found[0].pk)
    context = {
        "day": day,
        "arrivals": selectors.arrivals_on(day),
        "takings": selectors.takings_on(day),
        "currency": settings.MUSEUM_CURRENCY,
        "query": query,
        "found": found,
    }
    return _page(request, "desk/today.html", context)


@desk_only
@require_http_methods(["GET", "POST"])
def sell(request):
    posted = request.POST if request.method == "POST" else None
    form = SaleForm(posted, initial={"ticket_date": timezone.localdate()})
    quote = None
    status = 200
    if posted is not None and not form.is_valid():
        status = 400
    elif posted is not None:
        try:
            if "price" in request.POST:
                quote = quote_order(seller=request.user, **form.sale())
            else:
                order = _sell(request, form)
                return redirect("desk-order", order_id=order.pk)
        except MuseumProblem as problem:
            form.add_error(None, words(problem))
    day = form["ticket_date"].value()
    event = form["event"].value() or None
    context = {
        "form": form,
        "quote": quote,
        "currency": settings.MUSEUM_CURRENCY,
        **picker(
            day=_date(day),
            event_id=_uuid(event),
            chosen=request.POST.get("entry_time"),
        ),
    }
    return _page(request, "desk/sell.html", context, status=status)


class GiftCardSaleForm(forms.Form):
    amount = forms.DecimalField(
        label=gettext_lazy("Amount"), max_digits=10, decimal_places=2, min_value=0
    )
    email = forms.EmailField(
        required=False, help_text=gettext_lazy("To email the gift card as well.")
    )
    language = forms.ChoiceField(label=gettext_lazy("Visitor's language"), required=False)
    payment = forms.ChoiceField(choices=DESK_PAYMENTS, widget=forms.RadioSelect, initial="cash")
    tendered = SaleForm.base_fields["tendered"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        language = self.fields["language"]
        language.choices = visitor_languages()  # type: ignore[attr-defined]
        language.initial = settings.MUSEUM_LANGUAGE


@desk_only
@require_http_methods(["GET", "POST"])
def sell_gift_card(request):
    """A gift card sold to the visitor in front of the desk: its order, paid at once in cash or
    by card, issues it; the order's page shows its code to hand over."""
    form = GiftCardSaleForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST" and not form.is_valid():
        status = 400
    elif request.method == "POST":
        data = form.cleaned_data
        try:
            with transaction.atomic():
                card = giftcard_services.sell_gift_card(
                    buyer=request.user,
                    amount=data["amount"],
                    email=data.get("email") or "",
                    language=data.get("language") or settings.MUSEUM_LANGUAGE,
                    seller=request.user,
                )
                if card.order is not None and needs_payment(card.order):
                    _take_payment(request, order_id=card.order.pk, data=data)
            return redirect("desk-order", order_id=card.order_id)
        except MuseumProblem as problem:
            form.add_error(None, words(problem))
            status = 400
    context = {"form": form, "currency": settings.MUSEUM_CURRENCY}
    return _page(request, "desk/gift_card_sell.html", context, status=status)


class DonationSaleForm(forms.Form):
    fund: forms.ModelChoiceField[Fund] = forms.ModelChoiceField(
        label=gettext_lazy("Fund"), queryset=Fund.objects.none()
    )
    donation = forms.DecimalField(
        label=gettext_lazy("Amount"), max_digits=8, decimal_places=2, min_value=0
    )
    email = forms.EmailField(required=False, help_text=gettext_lazy("To email the receipt."))
    name = forms.CharField(max_length=100, required=False)
    language = forms.ChoiceField(label=gettext_lazy("Visitor's language"), required=False)
    payment = forms.ChoiceField(choices=DESK_PAYMENTS, widget=forms.RadioSelect, initial="cash")
    tendered = SaleForm.base_fields["tendered"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["fund"].queryset = giving.active_funds()  # type: ignore[attr-defined]
        language = self.fields["language"]
        language.choices = visitor_languages()  # type: ignore[attr-defined]
        language.initial = settings.MUSEUM_LANGUAGE


@desk_only
@require_http_methods(["GET", "POST"])
def sell_donation(request):
    """A donation alone, given at the desk: its order, paid at once in cash or by card
    (orders.services.donations.give, as the API's)."""
    form = DonationSaleForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST" and not form.is_valid():
        status = 400
    elif request.method == "POST":
        data = form.cleaned_data
        try:
            with transaction.atomic():
                order = giving.give(
                    buyer=request.user,
                    email=data.get("email") or "",
                    name=data.get("name") or "",
                    language=data.get("language") or settings.MUSEUM_LANGUAGE,
                    donations=donations_of_form(data),
                    seller=request.user,
                )
                if needs_payment(order):
                    _take_payment(request, order_id=order.pk, data=data)
            return redirect("desk-order", order_id=order.pk)
        except MuseumProblem as problem:
            form.add_error(None, words(problem))
            status = 400
    context = {"form": form, "currency": settings.MUSEUM_CURRENCY}
    return _page(request, "desk/donation_sell.html", context, status=status)


def _date(text) -> date | None:
    """The day a form or the picker was sent, or None: parse_date raises for a day that does not
    exist (2030-02-30, year 0)."""
    try:
        return parse_date(str(text)) if text else None
    except ValueError:
        return None


def _uuid(text) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(text)) if text else None
    except ValueError:
        return None


def _sell(request, form: SaleForm) -> Order:
    """The sale and its payment, all or nothing: cash short of the total sells nothing."""
    data = form.cleaned_data
    on_account = data["payment"] == "partner"
    with transaction.atomic():
        order = place_order(
            buyer=data["partner"] if on_account else request.user,
            email=data.get("email") or "",
            name=data.get("name") or "",
            # The visitor's, not the staff member's (the request's): the museum's by default.
            language=data.get("language") or settings.MUSEUM_LANGUAGE,
            seller=request.user,  # the desk's own limit on an order's size
            invoice=form.invoice(),
            **form.sale(),
        )
        if needs_payment(order):
            _take_payment(request, order_id=order.pk, data=data)
    messages.success(
        request,
        _("Sold: order %(code)s, %(total)s.")
        % {"code": order.confirmation_code, "total": money(order.total)},
        extra_tags="sold",  # desk.js: focus on Print
    )
    return order


def _take_payment(request, *, order_id: uuid.UUID, data: dict) -> None:
    """The desk's payment of a held order: first what a gift card holds, if its code is given,
    then what is left in cash (with the change to give) or by card; taken at once, the order is
    confirmed once its payments cover it, else it waits, held, for the rest."""
    if data.get("gift_card"):
        card = start_payment(
            order_id=order_id, by=request.user, provider_name=GIFT_CARD, code=data["gift_card"]
        )
        left = Order.objects.get(pk=order_id).due
        messages.info(
            request,
            _("Gift card: %(amount)s paid; left to pay: %(left)s")
            % {"amount": money(card.amount), "left": money(left)},
        )
        if not left:
            return
    cash = data["payment"] == "cash"
    payment = start_payment(
        order_id=order_id,
        by=request.user,
        provider_name=DESK,
        method=data["payment"],
        tendered=data.get("tendered") if cash else None,
    )
    if payment.tendered is not None:
        change = money(payment.tendered - payment.amount)
        messages.info(request, _("Change to give: %(change)s") % {"change": change})


PAID_AT_DESK = {
    "cash": gettext_lazy("Paid at the desk (cash)"),
    "card": gettext_lazy("Paid at the desk (card terminal)"),
}


def paid_how(order: Order, payments) -> str:
    """How the order was paid, in a clerk's words."""
    confirmed = [payment for payment in payments if payment.state == PaymentState.CONFIRMED]
    if order.channel == Channel.ON_ACCOUNT:
        return _("On a partner's account")
    if not confirmed:
        return _("Not paid") if order.total else _("Free")
    ways = [_paid_by(payment) for payment in confirmed]
    if len(ways) == 1:
        return ways[0]
    return " + ".join(f"{way} {money(p.amount)}" for way, p in zip(ways, confirmed, strict=True))


def _paid_by(payment) -> str:
    if payment.provider == DESK:
        return str(PAID_AT_DESK.get(payment.info, PAID_AT_DESK["card"]))
    if payment.provider == GIFT_CARD:
        return _("Gift card")
    return _("Paid online")


@desk_only
@require_http_methods(["GET"])
def order_page(request, order_id: uuid.UUID):
    order = selectors.viewable_order(order_id=order_id, viewer=request.user)
    return _order_page(request, order)


def _order_page(request, order: Order, *, status: int = 200):
    # An order selling a membership has no tickets: its page leads to the member instead; one
    # selling gift cards shows their codes, to hand over.
    membership_sale = order.membership_sales.select_related("membership").first()
    gift_cards = [
        (card, wallet_links(gift_card=card) if card.issued_at else [])
        for card in (order.gift_cards.all() if order.sells_gift_cards else [])
    ]
    not_paid = None
    donations = donations_of(order)
    printable = False
    if membership_sale is None and not order.sells_gift_cards and order.sells_visit:
        try:
            selectors.refuse_unless_printable(order)
            printable = True
        except NotPaid as problem:
            not_paid = problem  # said where "Print" would be, beside the payment it waits for
    payments = list(order.payments.order_by("created_at"))
    now = timezone.now()
    for ticket in order.sold_tickets:
        ticket.order = order  # what its state reads, without a query each
    context = {
        "order": order,
        "membership_sale": membership_sale,
        "gift_cards": gift_cards,
        "donations": donations,
        "not_paid": not_paid,
        "payment_form": PaymentForm() if _payable(order) else None,
        "due": order.due if order.status == OrderStatus.HELD else None,
        # Each valid ticket's wallet links, for staff to open or send (the email's).
        "tickets": [
            (
                ticket,
                TicketState(ticket.state(now)),
                wallet_links(ticket=ticket) if printable and not ticket.cancelled_at else [],
            )
            for ticket in sorted(order.sold_tickets, key=lambda t: t.confirmation_code)
        ],
        "payments": payments,
        "paid_how": paid_how(order, payments),
        "refunds": order.refunds.order_by("created_at"),
        "documents": [
            (document, print_words(document)) for document in selectors.documents_of(order.pk)
        ],
        "currency": settings.MUSEUM_CURRENCY,
        "move_form": MoveForm(initial={"ticket_date": order.date}),
        **picker(
            day=order.date,
            event_id=order.event_id,
            chosen=f"{order.slot.entry_time:%H:%M}" if order.slot else None,
        ),
    }
    return _page(request, "desk/order.html", context, status=status)


def _payable(order: Order) -> bool:
    """A held order the desk's payment confirms: an online one with a price, its hold running
    (start_payment refuses the others)."""
    return order.status == OrderStatus.HELD and needs_payment(order) and not order.hold_ran_out()


class PaymentForm(forms.Form):
    payment = forms.ChoiceField(choices=DESK_PAYMENTS, widget=forms.RadioSelect, initial="cash")
    gift_card = SaleForm.base_fields["gift_card"]
    tendered = forms.DecimalField(
        label="Cash handed over", required=False, min_value=0, max_digits=10, decimal_places=2
    )


@desk_only
@require_http_methods(["GET"])
def order_pdf(request, order_id: uuid.UUID):
    """The order's tickets to print at once; an order not paid has none (NotPaid), as at the
    API."""
    try:
        order = selectors.printable_order(order_id=order_id, viewer=request.user)
    except NotPaid as problem:
        messages.error(request, problem.detail, extra_tags=problem.code)
        return redirect("desk-order", order_id=order_id)
    kept = documents.order_pdf(order=order)
    response = HttpResponse(bytes(kept.pdf), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{order.confirmation_code}.pdf"'
    return response


def print_words(document: SaleDocument) -> str:
    """The link that prints a document, in the clerk's words."""
    words = {
        DocumentKind.RECEIPT: _("Print receipt %(number)s"),
        DocumentKind.INVOICE: _("Print invoice %(number)s"),
        DocumentKind.CREDIT_NOTE: _("Print credit note %(number)s"),
    }[DocumentKind(document.kind)]
    return words % {"number": document.number}


@desk_only
@require_http_methods(["GET"])
def document_pdf(request, order_id: uuid.UUID, number: str):
    """A receipt, invoice or credit note of the order, to print for the visitor."""
    document = selectors.viewable_document(order_id=order_id, number=number, viewer=request.user)
    kept = receipts.document_pdf(document)
    response = HttpResponse(bytes(kept.pdf), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{receipts.filename(kept)}"'
    return response


class MoveForm(forms.Form):
    ticket_date = forms.DateField(label=gettext_lazy("New day"), widget=DATE_INPUT)
    entry_time = forms.TimeField(
        label=gettext_lazy("New entry slot"), required=False, widget=TIME_INPUT
    )


@desk_only
@require_http_methods(["GET"])
def confirm_cancel(request, order_id: uuid.UUID):
    """What a cancellation would void and pay back, asked before it is done."""
    order = selectors.viewable_order(order_id=order_id, viewer=request.user)
    valid = [ticket for ticket in order.sold_tickets if not ticket.cancelled_at]
    ticket_id = _uuid(request.GET.get("ticket"))
    tickets = [t for t in valid if t.pk == ticket_id] if ticket_id else valid
    if not tickets:
        raise Http404()
    payment = order.payments.filter(state=PaymentState.CONFIRMED).first()
    context = {
        "order": order,
        "tickets": sorted(tickets, key=lambda t: t.confirmation_code),
        "one_ticket": ticket_id is not None,
        "amount": money(refund_due(order=order, tickets=tickets)),
        "back_how": _back_how(payment),
        "checked_in": [ticket for ticket in tickets if ticket.checked_in_at],
    }
    return _page(request, "desk/cancel.html", context)


def _back_how(payment) -> str:
    if payment is None:
        return _("by hand")
    if payment.provider == DESK:
        return _("in cash") if payment.info == "cash" else _("on the card terminal")
    if payment.provider == "on_account":
        return _("as a credit on the partner's account")
    return _("to the card or account the visitor paid with")


class CancelForm(forms.Form):
    ticket = forms.UUIDField(required=False, help_text="One ticket; empty: the whole order.")


CHANGES: dict[str, type[forms.Form]] = {
    "pay": PaymentForm,
    "resend": forms.Form,
    "move": MoveForm,
    "cancel": CancelForm,
}


@desk_only
@require_POST
def change_order(request, order_id: uuid.UUID, what: str):
    """Take the payment of a held order, resend, move, or cancel (the whole order or one ticket)
    from the order's page."""
    if what not in CHANGES:
        raise Http404()
    order = selectors.viewable_order(order_id=order_id, viewer=request.user)
    form = CHANGES[what](request.POST)
    if not form.is_valid():
        messages.error(request, _form_errors(form))
        return _order_page(request, order, status=400)
    try:
        if what == "pay":
            _take_payment(request, order_id=order_id, data=form.cleaned_data)
            messages.success(request, _("Paid: print the tickets."))
        elif what == "resend":
            resend_confirmation(order_id=order_id, by=request.user)
            messages.success(request, _("The confirmation email is on its way again."))
        elif what == "move":
            move_order(order_id=order_id, by=request.user, **form.cleaned_data)
            messages.success(request, _("Moved: print the tickets again."))
        else:
            _cancel(request, order_id=order_id, ticket_id=form.cleaned_data["ticket"])
    except MuseumProblem as problem:
        messages.error(request, words(problem), extra_tags=problem.code)
    return redirect(reverse("desk-order", kwargs={"order_id": order_id}))


def _cancel(request, *, order_id: uuid.UUID, ticket_id: uuid.UUID | None) -> None:
    with transaction.atomic():
        order = cancel_order(
            order_id=order_id,
            by=request.user,
            ticket_id=ticket_id,
            even_if_checked_in=request.POST.get("even_if_checked_in") == "yes",
        )
        paid_out = pay_out_at_desk(order=order, by=request.user)
    payment = order.payments.filter(state=PaymentState.CONFIRMED).first()
    if paid_out:
        # Large on the page: the clerk hands this back now.
        payout = _("Pay out %(amount)s %(how)s") % {
            "amount": money(paid_out),
            "how": _back_how(payment),
        }
        messages.success(request, payout, extra_tags="payout")
    else:
        messages.success(request, _("Cancelled."))


def _form_errors(form: forms.Form) -> str:
    # Each field by its label ("New entry slot: ..."), as the clerk reads it on the page.
    return "; ".join(
        f"{form[field].label}: {' '.join(str(word) for word in words)}"
        if field in form.fields
        else " ".join(str(word) for word in words)
        for field, words in form.errors.items()
    )
