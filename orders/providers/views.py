"""What payment providers call, outside the API: a provider's notification (Stripe's webhook), and
the demo provider's page.

Thin faces: the provider verifies and reads its own call (`handle_notification`), and
orders.services.payments moves the order once, whatever is repeated.
"""

import uuid

from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from museum.errors import STATUS_OF_KIND, problem_response
from museum.exceptions import MuseumProblem
from orders.models import Payment
from orders.providers import DEMO
from orders.services.payments import notification_received, payment_failed, payment_succeeded


@csrf_exempt
@require_POST
def notification(request, provider_name: str):
    """A provider's call about a payment (Stripe: POST /payments/stripe/webhook): 204 once
    handled, or a problem the provider retries on (a 5xx, a 409) or gives up on (a 400)."""
    try:
        notification_received(
            provider_name=provider_name, body=request.body, headers=request.headers
        )
    except MuseumProblem as problem:
        status = STATUS_OF_KIND[problem.kind]
        return problem_response(status=status, code=problem.code, detail=problem.detail)
    return HttpResponse(status=204)


# No CSRF token: the request carries no session or credentials to abuse, only the payment's id.
@csrf_exempt
@require_http_methods(["GET", "POST"])
def demo_payment(request, payment_id: uuid.UUID):
    """The demo provider's page: "Pay" or "Decline" completes the payment, as a bank's page
    would. Local work only (MUSEUM_DEMO_PAYMENTS, which needs DEBUG); the payment's unguessable
    id is what lets its buyer in, as a provider's checkout link does."""
    if not settings.MUSEUM_DEMO_PAYMENTS:
        raise Http404()
    payment = Payment.objects.select_related("order").filter(pk=payment_id, provider=DEMO).first()
    if payment is None:
        raise Http404()
    if request.method == "POST":
        if request.POST.get("outcome") == "pay":
            payment_succeeded(payment_id=payment.pk)
        else:
            payment_failed(payment_id=payment.pk, message="declined on the demo page")
        return redirect(request.path)
    return render(request, "orders/demo_payment.html", {"payment": payment})
