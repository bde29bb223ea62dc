"""The order's cancel page, for its visitor: the link in its email and PDF (signed for that order
alone, orders.tokens) opens it without an account. It lists the order's tickets with what each
brings back, and cancels one or all of them through the same service and rules as the API's
cancel, as the order's buyer: until the deadline, no ticket checked in. In the order's language;
limited per address like the API's requests without an account."""

import uuid

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from museum import i18n
from museum.errors import STATUS_OF_KIND
from museum.exceptions import MuseumProblem, NotFound
from museum.i18n import money
from museum.text import one_line
from museum.throttling import page_within_address_rate
from orders import documents, tokens
from orders.models import Order
from orders.notifications import counted
from orders.selectors import order_account
from orders.services.cancellation import cancel_order


# Its tickets' codes admit at the door: no shared cache keeps the page.
@never_cache
@require_http_methods(["GET", "POST"])
def cancel_page(request, token: str):
    order_id = tokens.order_of_cancel_link(token)
    if order_id is None:
        raise Http404()
    order = Order.objects.select_related("event", "slot").filter(pk=order_id).first()
    if order is None:
        raise Http404()
    with i18n.speaking(order.language):
        if not page_within_address_rate(request):
            return _page(
                request, order, outcome=_("Too many requests: try again in a minute."), status=429
            )
        if request.method == "GET":
            return _page(request, order)
        try:
            _cancel(order, ticket=request.POST.get("ticket", ""))
        except MuseumProblem as problem:
            return _page(
                request, order, outcome=str(problem.detail), status=STATUS_OF_KIND[problem.kind]
            )
        order.refresh_from_db()
        return _page(request, order, outcome=_("Cancelled. Your order as it is now:"))


def _cancel(order: Order, *, ticket: str) -> None:
    try:
        ticket_id = uuid.UUID(ticket) if ticket else None
    except ValueError:
        raise NotFound() from None
    cancel_order(order_id=order.pk, by=order.buyer, ticket_id=ticket_id, as_buyer=True)


def _page(request, order: Order, *, outcome: str = "", status: int = 200):
    account = order_account(order=order)
    terms = documents.cancelling(order)
    tickets = [
        {
            "id": ticket.pk,
            "code": ticket.confirmation_code,
            "category": counted(ticket.category, 1),
            "price": money(ticket.price),
            "back": money(ticket.price) if ticket.price else "",
            "cancellable": terms.open and ticket.checked_in_at is None,
        }
        for ticket in account.valid
    ]
    context = {
        "museum": one_line(settings.MUSEUM_NAME),
        "order": order,
        "what": documents.what_of(order),
        "day": i18n.day_in_words(order.date),
        "tickets": tickets,
        "cancelled": [
            {"code": ticket.confirmation_code, "category": counted(ticket.category, 1)}
            for ticket in account.cancelled
        ],
        "terms": terms,
        "all_back": money(account.still_valid) if account.still_valid else "",
        "outcome": outcome,
        "language": i18n.current(),
    }
    return render(request, "orders/cancel.html", context, status=status)
