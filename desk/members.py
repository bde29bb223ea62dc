"""The front desk's members: staff sell a membership (paid at the desk as a sale is) and renew
one, find a member by card code, name or email, see the member (status, validity, type, recent
visits), print their card (a gift's gift card for its giver), and book a member visit in an
entry slot with the slot picker.

Beside desk/views.py, whose guard, pages, picker and payment it shares: a thin face over the
same services as the API (sell_membership, renew_membership, place_order with `membership`), so
the desk cannot sell or admit what the API would refuse. Selling and renewing need
`orders.sell_memberships`; finding and seeing members, `orders.view_membership`.
"""

import uuid

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from desk.views import (
    DESK_PAYMENTS,
    PaymentForm,
    _date,
    _form_errors,
    _page,
    _take_payment,
    desk_only,
    picker,
    visitor_languages,
    words,
)
from museum.exceptions import MuseumProblem
from museum.forms import DATE_INPUT
from museum.i18n import money
from orders import membership_cards, selectors
from orders.exceptions import NoGiftCard, NoMembershipCard
from orders.models import (
    MEMBER_CATEGORY,
    Membership,
    MembershipType,
    Order,
    TicketType,
    Validity,
)

# The module, not its functions: sell_membership and renew_membership arrive with the sale of
# memberships (issue 37), merged beside this face.
from orders.services import memberships
from orders.services.payments import needs_payment
from orders.services.sale import place_order
from wallet.links import wallet_links

SELL_MEMBERSHIPS = "orders.sell_memberships"


def _may(user, permission: str) -> None:
    if not user.has_perm(permission):
        raise PermissionDenied("This is for staff who sell memberships at the front desk.")


class MembershipSaleForm(forms.Form):
    membership_type: forms.ModelChoiceField = forms.ModelChoiceField(
        label=gettext_lazy("Membership"),
        queryset=MembershipType.objects.filter(active=True),
        empty_label=None,
    )
    # Not required here: a gift has no holder until redeemed, and the sale says what it needs.
    holder_name = forms.CharField(
        label=gettext_lazy("Member's name"), max_length=100, required=False
    )
    email = forms.EmailField(label=gettext_lazy("Email"), required=False)
    start_date = forms.DateField(
        label=gettext_lazy("Starts on"),
        required=False,
        widget=DATE_INPUT,
        help_text="Today if empty.",
    )
    gift = forms.BooleanField(
        label=gettext_lazy("A gift"), required=False, help_text="The buyer gets a gift code."
    )
    language = forms.ChoiceField(
        label=gettext_lazy("Member's language"), required=False, help_text="The card's and emails'."
    )
    payment = forms.ChoiceField(choices=DESK_PAYMENTS, widget=forms.RadioSelect, initial="cash")
    tendered = forms.DecimalField(
        label=gettext_lazy("Amount handed over"),
        required=False,
        min_value=0,
        max_digits=10,
        decimal_places=2,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        language = self.fields["language"]
        language.choices = visitor_languages()  # type: ignore[attr-defined]
        language.initial = settings.MUSEUM_LANGUAGE


class VisitForm(forms.Form):
    ticket_date = forms.DateField(label=gettext_lazy("Day"), widget=DATE_INPUT)
    entry_time = forms.TimeField(label=gettext_lazy("Entry slot"), required=False)
    people = forms.IntegerField(label=gettext_lazy("Members coming"), min_value=1, initial=1)


def _membership(request, membership_id: uuid.UUID) -> Membership:
    """The membership for staff who may see any (NotFound otherwise: the desk's 404)."""
    return selectors.owned_membership(membership_id=membership_id, viewer=request.user)


@desk_only
@require_http_methods(["GET"])
def members(request):
    """Find a member by card code, name or email; one found opens at once."""
    _may(request.user, selectors.VIEW_ANY_MEMBERSHIP)
    query = request.GET.get("q", "")
    found = selectors.find_memberships(query=query)
    if len(found) == 1:
        return redirect("desk-member", membership_id=found[0].pk)
    context = {
        "query": query,
        "found": [(membership, memberships.status_on(membership)) for membership in found],
    }
    return _page(request, "desk/members.html", context)


@desk_only
@require_http_methods(["GET", "POST"])
def sell_member(request):
    _may(request.user, SELL_MEMBERSHIPS)
    posted = request.POST if request.method == "POST" else None
    form = MembershipSaleForm(posted)
    status = 200
    if posted is not None and not form.is_valid():
        status = 400
    elif posted is not None:
        try:
            membership = _sell(request, form.cleaned_data)
            return redirect("desk-member", membership_id=membership.pk)
        except MuseumProblem as problem:
            form.add_error(None, words(problem))
    context = {"form": form, "currency": settings.MUSEUM_CURRENCY}
    return _page(request, "desk/member_sell.html", context, status=status)


def _sell(request, data: dict) -> Membership:
    """The membership and its payment, all or nothing: cash short of the price sells nothing."""
    with transaction.atomic():
        membership = memberships.sell_membership(
            buyer=request.user,
            type_code=data["membership_type"].code,
            holder_name=data.get("holder_name") or "",
            email=data.get("email") or "",
            start_date=data.get("start_date"),
            gift=bool(data.get("gift")),
            # The member's, not the staff member's (the request's): the museum's by default.
            language=data.get("language") or settings.MUSEUM_LANGUAGE,
            seller=request.user,
        )
        order = membership.sales.get().order
        _pay(request, order, data)
    messages.success(
        request,
        _("Sold: membership %(code)s, %(total)s.")
        % {"code": membership.card_code, "total": money(order.total)},
        extra_tags="sold",
    )
    return membership


def _pay(request, order: Order, data: dict) -> None:
    if needs_payment(order):
        _take_payment(request, order_id=order.pk, data=data)


@desk_only
@require_http_methods(["GET"])
def member_page(request, membership_id: uuid.UUID):
    return _member_page(request, _membership(request, membership_id))


def _member_page(request, membership: Membership, *, visit_form=None, status: int = 200):
    today = timezone.localdate()
    try:
        selectors.refuse_unless_card_printable(membership)
        no_card = None
        # The card's wallet links, for staff to open or send (the activation email's).
        wallet = wallet_links(membership=membership)
    except NoMembershipCard as problem:
        no_card = problem  # said where "Print the card" would be
        wallet = []
    try:
        selectors.refuse_unless_gift_card_printable(membership)
        gift_card = True
    except NoGiftCard:
        gift_card = False  # a gift's page says its code, and whether it was redeemed
    chosen = request.POST.get("entry_time") if visit_form is not None else None
    day = _date(visit_form["ticket_date"].value()) if visit_form is not None else today
    context = {
        "membership": membership,
        "status": memberships.status_on(membership),
        "validity": Validity(membership.validity_on(today)).label,
        "no_card": no_card,
        "wallet": wallet,
        "gift_card": gift_card,
        "sales": membership.sales.select_related("order").order_by("-pk"),
        "visits": selectors.recent_member_visits(membership),
        "renew_form": PaymentForm(),
        "visit_form": visit_form or VisitForm(initial={"ticket_date": today, "people": 1}),
        "currency": settings.MUSEUM_CURRENCY,
        **picker(day=day, chosen=chosen),
    }
    return _page(request, "desk/member.html", context, status=status)


@desk_only
@require_POST
def renew_member(request, membership_id: uuid.UUID):
    _may(request.user, SELL_MEMBERSHIPS)
    membership = _membership(request, membership_id)
    form = PaymentForm(request.POST)
    if not form.is_valid():
        messages.error(request, _form_errors(form))
        return _member_page(request, membership, status=400)
    try:
        with transaction.atomic():
            order = memberships.renew_membership(
                membership=membership, buyer=request.user, seller=request.user
            )
            _pay(request, order, form.cleaned_data)
        messages.success(
            request,
            _("Renewed from %(day)s: order %(code)s, %(total)s.")
            % {
                "day": order.date.isoformat(),
                "code": order.confirmation_code,
                "total": money(order.total),
            },
            extra_tags="sold",
        )
    except MuseumProblem as problem:
        messages.error(request, words(problem), extra_tags=problem.code)
    return redirect("desk-member", membership_id=membership.pk)


@desk_only
@require_POST
def book_visit(request, membership_id: uuid.UUID):
    """A member visit in a slot: the member lines' free places, held for the member as the API
    holds them (place_order with the membership); then its order's page, to print."""
    membership = _membership(request, membership_id)
    form = VisitForm(request.POST)
    if not form.is_valid():
        messages.error(request, _form_errors(form))
        return _member_page(request, membership, visit_form=form, status=400)
    data = form.cleaned_data
    try:
        # A member visit's `membership` arrives with member visits (issue 37), merged beside.
        order = place_order(
            buyer=request.user,
            ticket_type=TicketType.GENERAL,
            ticket_date=data["ticket_date"],
            entry_time=data.get("entry_time"),
            lines=[{"category": MEMBER_CATEGORY, "quantity": data["people"]}],
            email=membership.email,
            name=membership.holder_name,
            language=membership.language,
            seller=request.user,
            membership=membership,
        )
    except MuseumProblem as problem:
        messages.error(request, words(problem), extra_tags=problem.code)
        return _member_page(request, membership, visit_form=form)
    messages.success(
        request,
        _("Member visit booked: order %(code)s.") % {"code": order.confirmation_code},
        extra_tags="sold",
    )
    return redirect("desk-order", order_id=order.pk)


@desk_only
@require_http_methods(["GET"])
def member_card(request, membership_id: uuid.UUID):
    """The card to print at once; a membership that has none (pending, cancelled) says why."""
    membership = _membership(request, membership_id)
    try:
        pdf = membership_cards.card_pdf(membership)
    except NoMembershipCard as problem:
        messages.error(request, problem.detail, extra_tags=problem.code)
        return redirect("desk-member", membership_id=membership_id)
    response = HttpResponse(pdf, content_type="application/pdf")
    filename = membership_cards.filename(membership, "pdf")
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    return response


@desk_only
@require_http_methods(["GET"])
def gift_card(request, membership_id: uuid.UUID):
    """A gift's card to print at once for the giver; one that has none (not paid, redeemed)
    says why."""
    membership = _membership(request, membership_id)
    try:
        pdf = membership_cards.gift_card_pdf(membership)
    except NoGiftCard as problem:
        messages.error(request, problem.detail, extra_tags=problem.code)
        return redirect("desk-member", membership_id=membership_id)
    response = HttpResponse(pdf, content_type="application/pdf")
    filename = membership_cards.gift_filename(membership)
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    return response
