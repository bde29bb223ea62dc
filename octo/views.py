"""/octo/: the museum as an OCTO supplier (docs/octo.md). Thin faces over octo.catalogue and
octo.services; errors in OCTO's shape, `{"error", "errorMessage", ...}`."""

from django.conf import settings
from django.http import Http404
from django.utils.translation import get_language
from rest_framework import exceptions, status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler

from museum.exceptions import MuseumProblem, NotFound
from museum.throttling import AddressRateThrottle
from octo import catalogue, offers, serializers, services, webhooks
from octo.authentication import BearerKeyAuthentication, KeyRateThrottle
from octo.exceptions import BadRequest, OctoError

SELL_ON_ACCOUNT = "orders.sell_on_account"
UNAUTHORIZED = "You didn't send a valid API Key in the Authorization header"
FORBIDDEN = "This API key's account is not a sales partner"


def octo_exception_handler(exc, context):
    if isinstance(exc, OctoError):
        body = {"error": exc.code, "errorMessage": str(exc.detail), **exc.extra}
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, NotFound):
        return Response({"error": "NOT_FOUND", "errorMessage": str(exc.detail)}, status=404)
    if isinstance(exc, MuseumProblem) and exc.kind == "unavailable":
        # A part of ours away for a moment (a drop's waiting room without Redis): ask again.
        body = {"error": "INTERNAL_SERVER_ERROR", "errorMessage": str(exc.detail)}
        unavailable = Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        unavailable["Retry-After"] = str(getattr(exc, "retry_after", 5))
        return unavailable
    if isinstance(exc, MuseumProblem):
        body = {"error": "UNPROCESSABLE_ENTITY", "errorMessage": str(exc.detail)}
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        unauthorized = Response(
            {"error": "UNAUTHORIZED", "errorMessage": UNAUTHORIZED},
            status=status.HTTP_401_UNAUTHORIZED,
        )
        unauthorized["WWW-Authenticate"] = 'Bearer realm="octo"'
        return unauthorized
    if isinstance(exc, exceptions.PermissionDenied):
        return Response({"error": "FORBIDDEN", "errorMessage": FORBIDDEN}, status=403)
    if isinstance(exc, (exceptions.ParseError, exceptions.ValidationError)):
        message = "; ".join(_in_words(exc.detail))
        return Response({"error": "BAD_REQUEST", "errorMessage": message}, status=400)
    response = exception_handler(exc, context)
    if response is not None:
        code = "NOT_FOUND" if isinstance(exc, Http404 | exceptions.NotFound) else "BAD_REQUEST"
        detail = getattr(exc, "detail", "")
        response.data = {"error": code, "errorMessage": str(detail)}
    return response


def _in_words(detail, path: str = "") -> list[str]:
    """A serializer's errors as "contact.emailAddress: Enter a valid email address."."""
    if isinstance(detail, dict):
        return [
            line
            for name, inner in detail.items()
            for line in _in_words(inner, f"{path}.{name}" if path else str(name))
        ]
    if isinstance(detail, list):
        return [line for inner in detail for line in _in_words(inner, path)]
    return [f"{path}: {detail}" if path else str(detail)]


def _has_nul(value) -> bool:
    """Whether a NUL hides anywhere in the value: PostgreSQL refuses it in text, which would
    turn a crafted request into a query error instead of an answer."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


class IsPartner(BasePermission):
    def has_permission(self, request, view):
        return bool(request.user and request.user.has_perm(SELL_ON_ACCOUNT))


class OctoView(APIView):
    authentication_classes = [BearerKeyAuthentication]
    permission_classes = [IsPartner]
    throttle_classes = [KeyRateThrottle, AddressRateThrottle]
    # Served from OCTO's own specification, not ours (docs/octo.md).
    schema = None

    def get_exception_handler(self):
        return octo_exception_handler

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if _has_nul(kwargs) or _has_nul(dict(request.query_params.lists())):
            raise BadRequest("The request holds a NUL character.")
        if request.method in ("POST", "PATCH", "DELETE") and _has_nul(request.data):
            raise BadRequest("The request holds a NUL character.")

    def capabilities(self) -> list[str]:
        asked = self.request.headers.get("Octo-Capabilities", "")
        names = {name.strip() for name in asked.split(",")}
        return [name for name in serializers.CAPABILITIES if name in names]

    def offered(self) -> bool:
        """Whether the client asked for `octo/offers`."""
        return serializers.OFFERS in self.capabilities()

    def with_offer(self, asked: dict) -> dict:
        """The request as read, its `offerCode` left out unless octo/offers was asked for (OCTO
        ignores the fields of a capability not asked for)."""
        if not self.offered():
            asked.pop("offer_code", None)
        return asked

    def commission(self):
        """The partner's commission where pricing was asked for, else None (no pricing)."""
        if serializers.PRICING not in self.capabilities():
            return None
        return services.commission_of(self.request.user)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        offered = self.capabilities()
        response["Octo-Capabilities"] = ", ".join(offered)
        if serializers.CONTENT in offered:
            # OCTO's content headers: the language the answer speaks (LocaleMiddleware chose it
            # from Accept-Language among settings.LANGUAGES, else the museum's) and those it may.
            response["Content-Language"] = serializers.language_tag()
            response["Available-Languages"] = ", ".join(
                serializers.language_tag(code) for code, _name in settings.LANGUAGES
            )
        return response

    def read(self, serializer_class, data=None) -> dict:
        """The body (or `data`) as `serializer_class` reads it: BAD_REQUEST if it cannot."""
        data = self.request.data if data is None else data
        if not isinstance(data, dict):
            raise BadRequest("The body must be a JSON object.")
        serializer = serializer_class(data=data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


class SupplierView(OctoView):
    def get(self, request):
        return Response(serializers.supplier(request.build_absolute_uri("/octo")))


class SuppliersView(OctoView):
    """`GET /octo/suppliers`: the one supplier, as Tiqets' client lists them."""

    def get(self, request):
        return Response([serializers.supplier(request.build_absolute_uri("/octo"))])


class CapabilitiesView(OctoView):
    def get(self, request):
        return Response(
            [
                {
                    "id": name,
                    "revision": 1,
                    "required": False,
                    "dependencies": serializers.DEPENDENCIES.get(name, []),
                    "docs": None,
                }
                for name in serializers.CAPABILITIES
            ]
        )


class ProductsView(OctoView):
    def get(self, request):
        commission = self.commission()
        return Response(
            [serializers.product_out(item, commission=commission) for item in catalogue.products()]
        )


class ProductView(OctoView):
    def get(self, request, product_id):
        return Response(
            serializers.product_out(catalogue.product(product_id), commission=self.commission())
        )


def _wanted(units: list[dict] | None) -> int:
    for unit in units or []:
        catalogue.category_for_unit(unit["id"])
    return sum(unit.get("quantity", 0) for unit in units or [])


def _asked(asked: dict) -> tuple[catalogue.Product, list[catalogue.Slot], int]:
    """The product, its availabilities asked for (dates or ids) and the units wanted."""
    item = catalogue.product(asked["product_id"])
    catalogue.check_option(asked["option_id"])
    wanted = _wanted(asked.get("units"))
    ids = asked.get("availability_ids")
    dates = [asked.get(name) for name in ("local_date", "local_date_start", "local_date_end")]
    if ids and any(dates):
        raise BadRequest("Name either availabilityIds or dates, not both.")
    if ids:
        moments = [catalogue.parse_availability_id(value) for value in ids]
        days = sorted({moment.date() for moment in moments if moment is not None})
        if not days:
            return item, [], wanted
        if (days[-1] - days[0]).days > catalogue.MAX_RANGE_DAYS:
            raise BadRequest("availabilityIds must lie within a year.")
        slots = catalogue.availabilities(item, first=days[0], last=days[-1])
        return item, [slot for slot in slots if slot.id in set(ids)], wanted
    start, end = asked.get("local_date_start"), asked.get("local_date_end")
    if asked.get("local_date") and not start:
        start = end = asked["local_date"]
    if not start or not end:
        raise BadRequest("Name localDateStart and localDateEnd, or availabilityIds.")
    catalogue.check_range(start, end)
    return item, catalogue.availabilities(item, first=start, last=end), wanted


class AvailabilityView(OctoView):
    def post(self, request):
        asked = self.read(serializers.AvailabilityIn)
        code = asked.pop("offer_code", "")
        offer = offers.asked(code) if self.offered() else None
        item, slots, wanted = _asked(asked)
        commission = self.commission()
        return Response(
            [
                serializers.availability_out(
                    slot, item, commission=commission, wanted=wanted, offer=offer
                )
                for slot in slots
            ]
        )


class CalendarView(OctoView):
    def post(self, request):
        asked = self.read(serializers.AvailabilityIn)
        asked.pop("offer_code", None)  # a day's prices are not priced with an offer (docs/octo.md)
        if not asked.get("local_date_start") or not asked.get("local_date_end"):
            raise BadRequest("Name localDateStart and localDateEnd.")
        item, slots, wanted = _asked(asked)
        return Response(
            serializers.calendar_out(slots, item, commission=self.commission(), wanted=wanted)
        )


class BookingFace(OctoView):
    def booking(self, booking):
        return Response(
            serializers.booking_out(
                booking,
                request=self.request,
                commission=self.commission(),
                offered=self.offered(),
            )
        )


class BookingsView(BookingFace):
    def get(self, request):
        asked = self.read(serializers.BookingsQuery, data=request.query_params)
        bookings = services.find_bookings(partner=request.user, **asked)
        commission, offered = self.commission(), self.offered()
        return Response(
            [
                serializers.booking_out(
                    booking, request=request, commission=commission, offered=offered
                )
                for booking in bookings
            ]
        )

    def post(self, request):
        asked = self.with_offer(self.read(serializers.ReserveIn))
        booking = services.reserve_booking(
            partner=request.user, language=get_language() or "", **asked
        )
        return self.booking(booking)


class BookingView(BookingFace):
    def get(self, request, uuid):
        return self.booking(services.booking_of(partner=request.user, uuid=uuid))

    def patch(self, request, uuid):
        asked = self.with_offer(self.read(serializers.UpdateIn))
        return self.booking(services.update_booking(partner=request.user, uuid=uuid, **asked))

    def delete(self, request, uuid):
        asked = self.read(serializers.CancelIn, data=request.data or {})
        return self.booking(services.cancel_booking(partner=request.user, uuid=uuid, **asked))


class ConfirmView(BookingFace):
    def post(self, request, uuid):
        asked = self.with_offer(self.read(serializers.BookingChangeIn))
        return self.booking(services.confirm_booking(partner=request.user, uuid=uuid, **asked))


class ExtendView(BookingFace):
    def post(self, request, uuid):
        asked = self.read(serializers.ExtendIn)
        return self.booking(services.extend_booking(partner=request.user, uuid=uuid, **asked))


class CancelView(BookingFace):
    def post(self, request, uuid):
        asked = self.read(serializers.CancelIn)
        return self.booking(services.cancel_booking(partner=request.user, uuid=uuid, **asked))


def _webhook(subscription, *, secret: bool = False) -> dict:
    shown = {
        "id": str(subscription.pk),
        "event": webhooks.event_of(subscription),
        "url": subscription.url,
        "active": subscription.active,
    }
    if secret:  # shown once, as the museum's webhooks show theirs
        shown["secret"] = subscription.secret
    return shown


class WebhooksView(OctoView):
    def get(self, request):
        return Response([_webhook(s) for s in webhooks.webhooks_of(partner=request.user)])

    def post(self, request):
        asked = self.read(serializers.WebhookIn)
        subscription = webhooks.create_webhook(partner=request.user, **asked)
        return Response(_webhook(subscription, secret=True))


class WebhookView(OctoView):
    def delete(self, request, webhook_id):
        webhooks.delete_webhook(partner=request.user, webhook_id=webhook_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
