"""What payment providers call, outside the API: Stripe's webhook, and the demo provider's page.

Thin faces: each verifies who is calling, then hands the provider's word to
orders.services.payments, which moves the order once whatever is repeated.
"""

import logging
import uuid

import stripe
from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from museum.errors import PROBLEM_CONTENT_TYPE, problem_body
from orders.models import Payment
from orders.providers import DEMO, STRIPE, ProviderError, StripeProvider
from orders.services.payments import payment_failed, payment_succeeded

logger = logging.getLogger(__name__)

# The events that move a payment; Stripe sends others too if the endpoint asks for them.
SUCCEEDED = "payment_intent.succeeded"
FAILED = "payment_intent.payment_failed"


def _problem(status: int, code: str, detail: str) -> JsonResponse:
    return JsonResponse(
        problem_body(status=status, code=code, detail=detail),
        status=status,
        content_type=PROBLEM_CONTENT_TYPE,
    )


@csrf_exempt
@require_POST
def stripe_webhook(request):
    """Stripe's notification of a PaymentIntent: its signature verified, the intent read again
    from Stripe before the order moves, and each event acted on once (its id is recorded)."""
    if not settings.STRIPE_SECRET_KEY:
        raise Http404()
    try:
        event = stripe.Webhook.construct_event(
            request.body,
            request.headers.get("Stripe-Signature", ""),
            settings.STRIPE_WEBHOOK_SECRET,
        )
    except (ValueError, stripe.SignatureVerificationError):
        return _problem(400, "bad_signature", "The Stripe-Signature header does not verify.")
    if event.type not in (SUCCEEDED, FAILED):
        return HttpResponse(status=204)
    intent = event.data.object
    payment = Payment.objects.filter(provider=STRIPE, reference=intent.id).first()
    if payment is None:
        # Not ours (another system on the same Stripe account), or a payment since deleted.
        return HttpResponse(status=204)
    if event.type == FAILED:
        error = getattr(intent, "last_payment_error", None)
        message = getattr(error, "message", None) or "declined"
        payment_failed(payment_id=payment.pk, message=message, event=(STRIPE, event.id))
        return HttpResponse(status=204)
    try:
        succeeded = StripeProvider().intent_succeeded(intent.id, amount=payment.amount)
    except ProviderError as exc:
        # Stripe retries a webhook that failed: the order moves when Stripe answers again.
        logger.warning("Stripe webhook %s: reading the intent failed: %s", event.id, exc)
        return _problem(503, "provider_failed", "Could not read the payment from Stripe.")
    if not succeeded:
        return _problem(409, "not_succeeded", "Stripe does not report this payment succeeded.")
    payment_succeeded(payment_id=payment.pk, event=(STRIPE, event.id))
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
