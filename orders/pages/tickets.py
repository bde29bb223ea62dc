"""An order's tickets PDF by a signed link (orders.tokens), without an account: what a reseller
hands its customer, who has no account here (OCTO's `PDF_URL`). The same PDF as the API's, by the
same rule (paid, not cancelled: selectors.refuse_unless_printable); limited per address like the
cancel page, since each answer may draw a PDF."""

from django.http import Http404, HttpResponse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET

from museum.exceptions import NotFound
from museum.throttling import page_within_address_rate
from orders import documents, tokens
from orders.exceptions import NotPaid
from orders.models import Order
from orders.selectors import refuse_unless_printable


@require_GET
def tickets_pdf(request, token: str):
    order_id = tokens.order_of_tickets_link(token)
    order = None if order_id is None else Order.objects.filter(pk=order_id).first()
    if order is None:
        raise Http404()
    if not page_within_address_rate(request):
        return HttpResponse("Too many requests: try again in a minute.", status=429)
    try:
        refuse_unless_printable(order)
    except (NotPaid, NotFound):
        # Never paid (held, run out, cancelled unpaid) or a membership's: no tickets to print.
        raise Http404() from None
    kept = documents.order_pdf(order=order)
    response = HttpResponse(bytes(kept.pdf), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{order.confirmation_code}.pdf"'
    # Its codes admit at the door: no shared cache keeps it, and a cancellation shows at once.
    patch_cache_control(response, private=True, no_cache=True)
    return response
