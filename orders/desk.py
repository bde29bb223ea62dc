"""The front desk: staff sell to the visitor in front of them, take cash or card, find an order
and reprint, resend, move or cancel it, and see today's arrivals and takings.

A thin face over the same services as the API (place_order, start_payment, cancel_order,
move_order...): the desk cannot sell what the API would refuse. Staff sign in through the admin's
login; every form carries Django's CSRF token.
"""

import uuid

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
from django.views.decorators.http import require_http_methods, require_POST

from events.models import SpecialEvent
from museum.exceptions import MuseumProblem
from orders import documents, selectors
from orders.models import Order, TicketType
from orders.providers import DESK, SELL_AT_DESK, SELL_ON_ACCOUNT
from orders.services.cancellation import cancel_order
from orders.services.changes import move_order, pay_out_at_desk, resend_confirmation
from orders.services.payments import needs_payment, start_payment
from orders.services.pricing import active_categories
from orders.services.sale import place_order, quote_order

DATE_INPUT = forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"})
TIME_INPUT = forms.TimeInput(format="%H:%M", attrs={"type": "time"})
PAYMENTS = [("cash", "Cash"), ("card", "Card terminal"), ("partner", "On a partner's account")]


def desk_only(view):
    """Signed in through the admin's login, with the front desk's permission."""

    @login_required(login_url="admin:login")
    def guarded(request, *args, **kwargs):
        if not request.user.has_perm(SELL_AT_DESK):
            raise PermissionDenied("The desk is for staff who sell at the front desk.")
        return view(request, *args, **kwargs)

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
    payment = forms.ChoiceField(choices=PAYMENTS, widget=forms.RadioSelect, initial="cash")
    tendered = forms.DecimalField(
        label="Cash handed over", required=False, min_value=0, max_digits=10, decimal_places=2
    )
    partner = forms.ModelChoiceField(queryset=get_user_model().objects.none(), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["partner"].queryset = partners()  # type: ignore[attr-defined]
        language = self.fields["language"]
        language.choices = visitor_languages()  # type: ignore[attr-defined]
        language.initial = settings.MUSEUM_LANGUAGE
        self.categories = list(active_categories())
        for category in self.categories:
            self.fields[f"qty_{category.category}"] = forms.IntegerField(
                label=category.name,
                min_value=0,
                max_value=settings.MUSEUM_DESK_MAX_TICKETS_PER_ORDER,
                initial=0,
                required=False,
            )

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
            raise forms.ValidationError("Choose at least one visitor.")
        if data.get("payment") == "partner" and not data.get("partner"):
            self.add_error("partner", "Choose the partner whose account pays.")
        return data

    def sale(self) -> dict:
        data = self.cleaned_data
        event = data.get("event")
        return {
            "ticket_type": TicketType.EVENT if event else TicketType.GENERAL,
            "ticket_date": data["ticket_date"],
            "lines": data["lines"],
            "event_id": event.pk if event else None,
            "entry_time": None if event else data.get("entry_time"),
        }


def _page(request, template: str, context: dict):
    return render(request, template, {"museum_name": settings.MUSEUM_NAME, **context})


@desk_only
@require_http_methods(["GET"])
def today(request):
    day = timezone.localdate()
    context = {
        "day": day,
        "arrivals": selectors.arrivals_on(day),
        "takings": selectors.takings_on(day),
        "currency": settings.MUSEUM_CURRENCY,
        "query": request.GET.get("q", ""),
        "found": selectors.find_orders(query=request.GET.get("q", "")),
    }
    return _page(request, "orders/desk/today.html", context)


@desk_only
@require_http_methods(["GET", "POST"])
def sell(request):
    form = SaleForm(request.POST or None, initial={"ticket_date": timezone.localdate()})
    quote = None
    if request.method == "POST" and form.is_valid():
        try:
            if "price" in request.POST:
                quote = quote_order(seller=request.user, **form.sale())
            else:
                order = _sell(request, form)
                return redirect("desk-order", order_id=order.pk)
        except MuseumProblem as problem:
            form.add_error(None, problem.detail)
    context = {"form": form, "quote": quote, "currency": settings.MUSEUM_CURRENCY}
    return _page(request, "orders/desk/sell.html", context)


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
            **form.sale(),
        )
        if needs_payment(order):
            payment = start_payment(
                order_id=order.pk,
                by=request.user,
                provider_name=DESK,
                method=data["payment"],
                tendered=data.get("tendered") if data["payment"] == "cash" else None,
            )
            if payment.tendered is not None:
                change = payment.tendered - payment.amount
                messages.info(request, f"Change: {change} {settings.MUSEUM_CURRENCY}")
    messages.success(request, f"Sold: order {order.confirmation_code}, {order.total}.")
    return order


@desk_only
@require_http_methods(["GET"])
def order_page(request, order_id: uuid.UUID):
    order = selectors.viewable_order(order_id=order_id, viewer=request.user)
    context = {
        "order": order,
        "tickets": sorted(order.sold_tickets, key=lambda t: t.confirmation_code),
        "payments": order.payments.order_by("created_at"),
        "refunds": order.refunds.order_by("created_at"),
        "currency": settings.MUSEUM_CURRENCY,
        "move_form": MoveForm(initial={"ticket_date": order.date}),
    }
    return _page(request, "orders/desk/order.html", context)


@desk_only
@require_http_methods(["GET"])
def order_pdf(request, order_id: uuid.UUID):
    """The order's tickets to print at once."""
    order = selectors.viewable_order(order_id=order_id, viewer=request.user)
    kept = documents.order_pdf(order=order)
    response = HttpResponse(bytes(kept.pdf), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{order.confirmation_code}.pdf"'
    return response


class MoveForm(forms.Form):
    ticket_date = forms.DateField(label="New day", widget=DATE_INPUT)
    entry_time = forms.TimeField(label="New entry slot", required=False, widget=TIME_INPUT)


@desk_only
@require_POST
def change_order(request, order_id: uuid.UUID, what: str):
    """Resend, move, or cancel (the whole order or one ticket) from the order's page."""
    try:
        if what == "resend":
            resend_confirmation(order_id=order_id, by=request.user)
            messages.success(request, "The confirmation email is on its way again.")
        elif what == "move":
            form = MoveForm(request.POST)
            if not form.is_valid():
                raise _form_problem(form)
            move_order(order_id=order_id, by=request.user, **form.cleaned_data)
            messages.success(request, "Moved: print the tickets again.")
        elif what == "cancel":
            _cancel(request, order_id=order_id)
        else:
            raise Http404()
    except MuseumProblem as problem:
        messages.error(request, problem.detail)
    return redirect(reverse("desk-order", kwargs={"order_id": order_id}))


def _cancel(request, *, order_id: uuid.UUID) -> None:
    ticket = request.POST.get("ticket")
    with transaction.atomic():
        order = cancel_order(
            order_id=order_id,
            by=request.user,
            ticket_id=uuid.UUID(ticket) if ticket else None,
        )
        paid_out = pay_out_at_desk(order=order, by=request.user)
    words = f": pay out {paid_out:.2f} {settings.MUSEUM_CURRENCY}" if paid_out else ""
    messages.success(request, f"Cancelled{words}.")


def _form_problem(form: forms.Form) -> MuseumProblem:
    errors = "; ".join(
        f"{field}: {' '.join(str(word) for word in words)}" for field, words in form.errors.items()
    )
    return MuseumProblem(errors)
