"""The visitor's page to give to the museum's funds: the link in a paid order's email (signed for
that order alone, orders.tokens) opens it without an account. It lists the active funds with
their suggested amounts as buttons and a field for another amount, and makes a donation-only
order for the order's buyer and email through the same service as `POST /v1.1/donations`
(orders.services.donations.give), then sends the visitor to pay it: to the payment page of the
provider that has one (the demo's, in local work), else it shows the order held until paid and
the API's link to pay it (a Stripe payment is completed by the museum's own checkout with
Stripe.js, which this service does not draw). In the order's language; limited per address like
the cancel page."""

from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from museum import i18n
from museum.errors import STATUS_OF_KIND
from museum.exceptions import MuseumProblem
from museum.i18n import money
from museum.text import one_line
from museum.throttling import page_within_address_rate
from orders import documents, tokens
from orders.models import Order
from orders.providers import DEMO, offered
from orders.services import donations as giving
from orders.services.payments import start_payment


@never_cache
@require_http_methods(["GET", "POST"])
def donate_page(request, token: str):
    order_id = tokens.order_of_donate_link(token)
    order = Order.objects.filter(pk=order_id).first() if order_id else None
    if order is None or not documents.donate_link(order):
        raise Http404()
    with i18n.speaking(order.language):
        if not page_within_address_rate(request):
            return _page(
                request, order, outcome=_("Too many requests: try again in a minute."), status=429
            )
        if request.method == "GET":
            return _page(request, order)
        try:
            given = _give(
                order, fund=request.POST.get("fund", ""), amount=request.POST.get("amount", "")
            )
        except MuseumProblem as problem:
            return _page(
                request, order, outcome=str(problem.detail), status=STATUS_OF_KIND[problem.kind]
            )
        return _to_pay(request, order, given)


def _give(order: Order, *, fund: str, amount: str) -> Order:
    try:
        line = {"fund": int(fund), "amount": Decimal(amount.replace(",", "."))}
    except (ValueError, InvalidOperation):
        line = {"fund": 0, "amount": Decimal("0")}
    return giving.give(
        buyer=order.buyer,
        email=order.email,
        name=order.name,
        language=order.language,
        donations=[line],
    )


def _to_pay(request, order: Order, given: Order):
    """To the provider's payment page where it has one (the demo's), else the order held, with
    the API's link that pays it."""
    if DEMO in offered(order.buyer):
        payment = start_payment(order_id=given.pk, by=order.buyer, provider_name=DEMO)
        if payment.pay_url:
            return HttpResponseRedirect(payment.pay_url)
    pay = reverse("orders-payments", kwargs={"orderId": given.pk})
    outcome = _(
        "Thank you. Your donation (order %(code)s, %(total)s) is held until it is paid: %(link)s"
    ) % {
        "code": given.confirmation_code,
        "total": money(given.total),
        "link": settings.MUSEUM_PUBLIC_URL + pay,
    }
    return _page(request, order, outcome=outcome, status=201)


def _page(request, order: Order, *, outcome: str = "", status: int = 200):
    funds = [
        {
            "id": fund.pk,
            "name": one_line(fund.name),
            "description": fund.description,
            "minimum": money(fund.minimum),
            "maximum": money(fund.maximum),
            "suggested": [(str(a), money(Decimal(str(a)))) for a in fund.suggested_amounts],
        }
        for fund in giving.active_funds()
    ]
    context = {
        "museum": one_line(settings.MUSEUM_NAME),
        "order": order,
        "funds": funds,
        "outcome": outcome,
        "language": i18n.current(),
    }
    return render(request, "orders/donate.html", context, status=status)
