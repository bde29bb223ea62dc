"""OCTO's shapes, written out: the supplier, products, availability and bookings as OCTO's
specification names their fields (octotravel/octo-types, src/openapi.yaml). Pricing goes out
where the client asked for the `octo/pricing` capability."""

from datetime import UTC, datetime
from decimal import Decimal

from django.conf import settings
from django.core.validators import EmailValidator
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import get_language, to_locale
from rest_framework import serializers as drf

from museum.fields import StrictCharField, StrictDateField, StrictIntegerField, StrictUUIDField
from octo import catalogue, offers
from octo.models import Booking
from orders.models import OrderStatus, Ticket
from orders.selectors import tickets_of
from orders.tokens import sign_ticket, sign_tickets_link

PRICING = "octo/pricing"
CONTENT = "octo/content"
WEBHOOKS = "octo/webhooks"
OFFERS = "octo/offers"
CAPABILITIES = [PRICING, CONTENT, WEBHOOKS, OFFERS]
# What a capability needs beside it, as OCTO lists it (its prices are octo/pricing's).
DEPENDENCIES = {OFFERS: [PRICING]}


def language_tag(code: str | None = None) -> str:
    """A Django language code (by default the active one) as BCP 47 writes it: en-gb is en-GB."""
    return to_locale(code or get_language() or settings.LANGUAGE_CODE).replace("_", "-")


def utc(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def supplier(endpoint: str) -> dict:
    return {
        "id": "museum",
        "name": settings.MUSEUM_NAME,
        "endpoint": endpoint,
        "contact": {
            "website": None,
            "email": settings.DEFAULT_FROM_EMAIL or None,
            "telephone": None,
            "address": settings.MUSEUM_ADDRESS or None,
        },
    }


# OCTO's minAge and maxAge are required integers: a category without the museum's ages says the
# widest span, as the specification's own examples do for "any age".
NO_MIN_AGE, NO_MAX_AGE = 0, 100


def _restrictions(category, unit) -> dict:
    """A unit's restrictions as staff set them on its OCTO unit: ages where set, `idRequired`
    where the category asks for proof (not every category the door looks at)."""
    needs = category.needs_companion
    return {
        "minAge": NO_MIN_AGE if unit.min_age is None else unit.min_age,
        "maxAge": NO_MAX_AGE if unit.max_age is None else unit.max_age,
        "idRequired": unit.id_required,
        "minQuantity": None,
        "maxQuantity": None,
        "paxCount": 1,
        "accompaniedBy": (
            [other.category for other, _ in catalogue.units() if not other.needs_companion]
            if needs
            else []
        ),
    }


def unit_out(category, unit, item: catalogue.Product, *, pricing: Decimal | None) -> dict:
    shown = {
        "id": category.category,
        "internalName": category.name,
        "reference": category.category,
        "type": unit.unit_type,
        "restrictions": _restrictions(category, unit),
        "requiredContactFields": [],
        "title": category.name,
    }
    if pricing is not None:
        price = catalogue.pricing(catalogue.unit_price(category, item), commission=pricing)
        shown["pricingFrom"] = shown["pricing"] = [price]
    return shown


def product_out(item: catalogue.Product, *, commission: Decimal | None) -> dict:
    units = [
        unit_out(category, unit, item, pricing=commission) for category, unit in catalogue.units()
    ]
    timed = item.event is not None or catalogue.has_slots(item)
    hours = settings.MUSEUM_CANCEL_HOURS_BEFORE
    option = {
        "id": catalogue.OPTION,
        "default": True,
        "internalName": "Default",
        "reference": None,
        "availabilityLocalStartTimes": catalogue.start_times(item),
        "cancellationCutoff": f"{hours} hours",
        "cancellationCutoffAmount": hours,
        "cancellationCutoffUnit": "hour",
        "requiredContactFields": [],
        "restrictions": {"minUnits": 1, "maxUnits": settings.MUSEUM_MAX_TICKETS_PER_ORDER},
        "units": units,
        "title": "Default",
    }
    if commission is not None:
        option["pricingFrom"] = [unit["pricing"][0] for unit in units[:1]]
    shown = {
        "id": item.id,
        "internalName": catalogue.title(item),
        "reference": None,
        "locale": language_tag(),
        "timeZone": settings.TIME_ZONE,
        "allowFreesale": False,
        "instantConfirmation": True,
        "instantDelivery": True,
        "availabilityRequired": True,
        "availabilityType": "START_TIME" if timed else "OPENING_HOURS",
        "deliveryFormats": ["QRCODE", "PDF_URL"],
        "deliveryMethods": ["TICKET", "VOUCHER"],
        "redemptionMethod": "DIGITAL",
        "options": [option],
        "title": catalogue.title(item),
        "shortDescription": None if item.event is None else item.event.description[:200],
    }
    if commission is not None:
        shown["defaultCurrency"] = settings.MUSEUM_CURRENCY
        shown["availableCurrencies"] = [settings.MUSEUM_CURRENCY]
        shown["pricingPer"] = "UNIT"
    return shown


def availability_out(
    slot: catalogue.Slot,
    item: catalogue.Product,
    *,
    commission: Decimal | None,
    wanted: int = 0,
    offer: offers.Asked | None = None,
) -> dict:
    """An availability; with `offer` (octo/offers asked) the offer fields, and where its voucher
    reduces a unit on this slot that unit's pricing with it (`original` before it)."""
    status = slot.status
    if status != "CLOSED" and wanted and slot.vacancies is not None and slot.vacancies < wanted:
        status = "SOLD_OUT"
    shown = {
        "id": slot.id,
        "localDateTimeStart": timezone.localtime(slot.start).isoformat(),
        "localDateTimeEnd": timezone.localtime(slot.end).isoformat(),
        "utcCutoffAt": utc(slot.cutoff),
        "allDay": slot.all_day,
        "available": status in ("AVAILABLE", "LIMITED"),
        "status": status,
        "vacancies": slot.vacancies,
        "capacity": slot.capacity,
        "maxUnits": None,
        "openingHours": slot.opening_hours,
    }
    lines = None
    if offer is not None:
        lines = None if offer.voucher is None else offers.unit_lines(item, slot, offer.voucher)
        shown.update(offers.fields(offer.offer if lines and offers.applies(lines) else None))
    if commission is not None:
        shown["unitPricing"] = (
            _unit_pricing(item, commission=commission)
            if lines is None
            else [
                {
                    "unitId": line.code,
                    **catalogue.pricing(
                        line.price, commission=commission, original=line.price + line.discount
                    ),
                }
                for line in lines
            ]
        )
    return shown


def _unit_pricing(item: catalogue.Product, *, commission: Decimal) -> list[dict]:
    """Each unit's pricing (the product's pricingPer is UNIT): a price is the category's for
    the product, whatever the day."""
    return [
        {
            "unitId": category.category,
            **catalogue.pricing(catalogue.unit_price(category, item), commission=commission),
        }
        for category, _ in catalogue.units()
    ]


def calendar_out(
    slots: list[catalogue.Slot],
    item: catalogue.Product,
    *,
    commission: Decimal | None,
    wanted: int = 0,
) -> list[dict]:
    # The same every day (prices do not change by date): read once for the whole range.
    prices = None if commission is None else _unit_pricing(item, commission=commission)
    days: dict = {}
    for slot in slots:
        days.setdefault(slot.date, []).append(slot)
    shown = []
    for day, of_day in sorted(days.items()):
        counted = [slot.vacancies for slot in of_day]
        vacancies = None if None in counted else sum(v or 0 for v in counted)
        capacities = [slot.capacity for slot in of_day]
        capacity = None if None in capacities else sum(c or 0 for c in capacities)
        best = max((slot.vacancies for slot in of_day if slot.vacancies is not None), default=None)
        open_any = any(slot.vacancies != 0 and not slot.closed for slot in of_day)
        if wanted and best is not None and None not in counted and best < wanted:
            open_any = False
        status = "AVAILABLE" if open_any else "SOLD_OUT"
        if all(slot.closed for slot in of_day):
            status = "CLOSED"  # every sale of the day past its cut-off
        if open_any and vacancies is not None and capacity and vacancies < capacity / 2:
            status = "LIMITED"
        of_date = {
            "localDate": day.isoformat(),
            "available": open_any,
            "status": status,
            "vacancies": vacancies,
            "capacity": capacity,
            "openingHours": of_day[0].opening_hours,
        }
        if prices is not None:
            of_date["unitPricingFrom"] = prices
        shown.append(of_date)
    return shown


STATUS = {
    OrderStatus.CONFIRMED: "CONFIRMED",
    OrderStatus.CANCELLED: "CANCELLED",
    OrderStatus.EXPIRED: "EXPIRED",
}


def booking_status(booking: Booking) -> str:
    order = booking.order
    if order.status == OrderStatus.HELD:
        return "EXPIRED" if order.hold_ran_out() else "ON_HOLD"
    return STATUS[OrderStatus(order.status)]


def _ticket(ticket: Ticket | None, *, pdf_url: str, confirmed: bool) -> dict:
    """A unit's ticket: what admits its holder once the booking is confirmed (none before)."""
    delivered = confirmed and ticket is not None
    return {
        "redemptionMethod": "DIGITAL",
        "utcRedeemedAt": utc(ticket.checked_in_at) if ticket else None,
        "deliveryOptions": [
            {
                "deliveryFormat": "QRCODE",
                "deliveryValue": sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date),
            },
            {"deliveryFormat": "PDF_URL", "deliveryValue": pdf_url},
        ]
        if delivered and ticket is not None
        else [],
    }


def booking_out(
    booking: Booking, *, request, commission: Decimal | None, offered: bool = False
) -> dict:
    """A booking; with `offered` (octo/offers asked) its offer fields. Its pricing and each unit
    item's say the price before a voucher's discount as `original`."""
    order = booking.order
    status = booking_status(booking)
    confirmed = status == "CONFIRMED"
    tickets = {str(ticket.pk): ticket for ticket in tickets_of(order)}
    # The signed link needs no account: the reseller hands it to its customer as it is.
    token = sign_tickets_link(order_id=order.pk)
    pdf_path = reverse("tickets-link", kwargs={"token": token})
    # Without a request (a webhook's body), the configured address of the service.
    pdf_url = (
        request.build_absolute_uri(pdf_path) if request else settings.MUSEUM_PUBLIC_URL + pdf_path
    )
    item = catalogue.product(booking.product_id, called_off_too=True)
    product = product_out(item, commission=commission)
    units = {unit["id"]: unit for unit in product["options"][0]["units"]}
    slot = None
    if status != "CANCELLED" and (item.event is None or item.event.cancelled_at is None):
        slot = catalogue.availability_named(item, booking.availability_id)
    contact = _contact(booking)
    unit_items = []
    for unit in booking.unit_items:
        ticket = tickets.get(unit.get("ticketId", ""))
        shown = {
            "uuid": unit["uuid"],
            "resellerReference": unit.get("resellerReference"),
            "supplierReference": ticket.confirmation_code if ticket else None,
            "unitId": unit["unitId"],
            "unit": units.get(unit["unitId"]),
            "status": status,
            "utcRedeemedAt": utc(ticket.checked_in_at) if ticket else None,
            "contact": contact,
            "ticket": _ticket(ticket, pdf_url=pdf_url, confirmed=confirmed),
        }
        if commission is not None and ticket is not None:
            shown["pricing"] = catalogue.pricing(
                ticket.price, commission=commission, original=ticket.price + ticket.discount
            )
        unit_items.append(shown)
    cancelled = status == "CANCELLED"
    shown = {
        "id": str(booking.pk),
        "uuid": booking.uuid,
        "testMode": False,
        "resellerReference": booking.reseller_reference or None,
        "supplierReference": order.confirmation_code,
        "status": status,
        "utcCreatedAt": utc(booking.created_at),
        "utcUpdatedAt": utc(booking.updated_at),
        "utcExpiresAt": utc(order.hold_expires_at) if status == "ON_HOLD" else None,
        "utcRedeemedAt": None,
        "utcConfirmedAt": utc(order.confirmed_at),
        "productId": booking.product_id,
        "product": product,
        "optionId": catalogue.OPTION,
        "option": product["options"][0],
        "cancellable": status in ("ON_HOLD", "CONFIRMED"),
        "cancellation": (
            {
                "refund": "FULL" if order.total else "NONE",
                "reason": booking.cancellation_reason,
                "utcCancelledAt": utc(order.cancelled_at),
            }
            if cancelled
            else None
        ),
        "freesale": False,
        "availabilityId": booking.availability_id,
        "availability": (
            availability_out(slot, item, commission=None)
            if slot is not None
            else _past_availability(booking)
        ),
        "contact": contact,
        "notes": booking.notes or None,
        "deliveryMethods": ["TICKET", "VOUCHER"],
        # The order's code, which the door admits all of its tickets by.
        "voucher": {
            "redemptionMethod": "DIGITAL",
            "utcRedeemedAt": None,
            "deliveryOptions": [
                {"deliveryFormat": "QRCODE", "deliveryValue": order.confirmation_code},
                {"deliveryFormat": "PDF_URL", "deliveryValue": pdf_url},
            ]
            if confirmed
            else [],
        },
        "unitItems": unit_items,
    }
    if commission is not None:
        discounts = sum((ticket.discount for ticket in tickets.values()), Decimal("0"))
        shown["pricing"] = catalogue.pricing(
            order.total, commission=commission, original=order.total + discounts
        )
    if offered:
        shown.update(offers.fields(_offer(booking)))
    return shown


def _offer(booking: Booking) -> dict | None:
    """The booking's offer: the code it was placed with (whether or not its voucher made a
    ticket cheaper: one no better than the catalogue is not used)."""
    if not booking.offer_code:
        return None
    return offers.offer_out(offers.voucher_named(booking.offer_code), booking.offer_code)


def _past_availability(booking: Booking) -> dict:
    """The availability a booking no longer holds (or holds for good): its times, as booked."""
    start = catalogue.parse_availability_id(booking.availability_id)
    assert start is not None
    order = booking.order
    return {
        "id": booking.availability_id,
        "localDateTimeStart": start.isoformat(),
        "localDateTimeEnd": start.isoformat(),
        "utcCutoffAt": utc(start),
        "allDay": order.slot_id is None,
        "available": False,
        "status": "CLOSED",
        "vacancies": None,
        "capacity": None,
        "maxUnits": None,
        "openingHours": [],
    }


def _contact(booking: Booking) -> dict:
    given = booking.contact or {}
    return {
        "fullName": given.get("fullName") or booking.order.name or None,
        "firstName": given.get("firstName"),
        "lastName": given.get("lastName"),
        "emailAddress": given.get("emailAddress") or booking.order.email or None,
        "phoneNumber": given.get("phoneNumber") or booking.order.phone or None,
        "locales": given.get("locales") or [],
        "postalCode": given.get("postalCode"),
        "country": given.get("country"),
        "notes": given.get("notes"),
    }


# What OCTO's requests may carry: every body and query is read by one of these, so a value of
# the wrong type or length is a BAD_REQUEST before any service sees it (docs/octo.md, "Limits").
MAX_NAME = 100
MAX_REFERENCE = 100
MAX_NOTES = 2000
MAX_REASON = 500
MAX_ID = 64
MAX_AVAILABILITY_ID = 40
MAX_UNIT_ITEMS = 200
MAX_AVAILABILITY_IDS = 400
MAX_WEBHOOK_URL = 500
MAX_EXPIRATION_MINUTES = 60 * 24 * 366


class OptionalText(StrictCharField):
    """Text OCTO may leave out or send as null: null is the empty text."""

    def __init__(self, **kwargs):
        super().__init__(required=False, allow_blank=True, allow_null=True, **kwargs)

    def validate_empty_values(self, data):
        if data is None:
            return True, ""
        return super().validate_empty_values(data)


def _nullable(field: type[drf.Field], **kwargs) -> drf.Field:
    return field(required=False, allow_null=True, **kwargs)


class ContactIn(drf.Serializer):
    """OCTO's contact; only the fields sent are in its data (a PATCH changes only those)."""

    fullName = _nullable(StrictCharField, allow_blank=True, max_length=MAX_NAME)
    firstName = _nullable(StrictCharField, allow_blank=True, max_length=MAX_NAME)
    lastName = _nullable(StrictCharField, allow_blank=True, max_length=MAX_NAME)
    emailAddress = _nullable(
        StrictCharField, allow_blank=True, max_length=254, validators=[EmailValidator()]
    )
    phoneNumber = _nullable(StrictCharField, allow_blank=True, max_length=32)
    locales = _nullable(drf.ListField, child=StrictCharField(max_length=35), max_length=10)
    postalCode = _nullable(StrictCharField, allow_blank=True, max_length=20)
    country = _nullable(StrictCharField, allow_blank=True, max_length=64)
    notes = _nullable(StrictCharField, allow_blank=True, max_length=MAX_REASON)


class UnitItemIn(drf.Serializer):
    """A unit item as the booking keeps it (OCTO's names)."""

    uuid = _nullable(StrictCharField, allow_blank=True, max_length=MAX_ID)
    unitId = StrictCharField(max_length=MAX_ID)
    resellerReference = _nullable(StrictCharField, allow_blank=True, max_length=MAX_REFERENCE)


def _unit_items() -> drf.Field:
    return drf.ListField(
        child=UnitItemIn(), max_length=MAX_UNIT_ITEMS, required=False, source="unit_items"
    )


class BookingChangeIn(drf.Serializer):
    """What a confirmation, and a PATCH, may change: only the fields sent are in its data."""

    contact = ContactIn(required=False, allow_null=True)
    notes = OptionalText(max_length=MAX_NOTES)
    resellerReference = OptionalText(max_length=MAX_REFERENCE, source="reseller_reference")
    unitItems = _unit_items()
    # octo/offers: a voucher's code; empty or null: none (read only where the capability is).
    offerCode = OptionalText(max_length=MAX_ID, source="offer_code")

    def validate_contact(self, contact):
        return {} if contact is None else contact


class UpdateIn(BookingChangeIn):
    availabilityId = StrictCharField(
        max_length=MAX_AVAILABILITY_ID, required=False, source="availability_id"
    )
    productId = StrictCharField(max_length=MAX_ID, required=False, source="product_id")
    optionId = StrictCharField(max_length=MAX_ID, required=False, source="option_id")


class ReserveIn(drf.Serializer):
    uuid = _nullable(StrictUUIDField)
    productId = StrictCharField(max_length=MAX_ID, source="product_id")
    optionId = StrictCharField(max_length=MAX_ID, source="option_id")
    availabilityId = StrictCharField(max_length=MAX_AVAILABILITY_ID, source="availability_id")
    # Missing is as empty: OCTO answers both UNPROCESSABLE_ENTITY (octo.services._unit_items).
    unitItems = drf.ListField(
        child=UnitItemIn(), max_length=MAX_UNIT_ITEMS, source="unit_items", default=list
    )
    expirationMinutes = _nullable(
        StrictIntegerField,
        min_value=1,
        max_value=MAX_EXPIRATION_MINUTES,
        source="expiration_minutes",
    )
    notes = OptionalText(max_length=MAX_NOTES)
    resellerReference = OptionalText(max_length=MAX_REFERENCE, source="reseller_reference")
    contact = ContactIn(required=False, allow_null=True)
    offerCode = OptionalText(max_length=MAX_ID, source="offer_code")

    def validate_contact(self, contact):
        return {} if contact is None else contact


class ExtendIn(drf.Serializer):
    expirationMinutes = _nullable(
        StrictIntegerField,
        min_value=1,
        max_value=MAX_EXPIRATION_MINUTES,
        source="expiration_minutes",
    )


class CancelIn(drf.Serializer):
    reason = OptionalText(max_length=MAX_REASON)


class Day(StrictDateField):
    """A date the museum's clock can turn into moments in any zone: not the calendar's first
    or last day, where a local midnight lies outside what Python can write."""

    def to_internal_value(self, value):
        day = super().to_internal_value(value)
        if not catalogue.FIRST_DAY <= day <= catalogue.LAST_DAY:
            self.fail("invalid")
        return day


class UnitsIn(drf.Serializer):
    id = StrictCharField(max_length=MAX_ID)
    quantity = StrictIntegerField(min_value=0, max_value=MAX_UNIT_ITEMS, required=False)


class AvailabilityIn(drf.Serializer):
    productId = StrictCharField(max_length=MAX_ID, source="product_id")
    optionId = StrictCharField(max_length=MAX_ID, source="option_id")
    localDate = _nullable(Day, source="local_date")
    localDateStart = _nullable(Day, source="local_date_start")
    localDateEnd = _nullable(Day, source="local_date_end")
    availabilityIds = _nullable(
        drf.ListField,
        child=StrictCharField(max_length=MAX_AVAILABILITY_ID),
        max_length=MAX_AVAILABILITY_IDS,
        source="availability_ids",
    )
    units = _nullable(drf.ListField, child=UnitsIn(), max_length=MAX_UNIT_ITEMS)
    offerCode = OptionalText(max_length=MAX_ID, source="offer_code")


class BookingsQuery(drf.Serializer):
    resellerReference = StrictCharField(
        max_length=MAX_REFERENCE, required=False, source="reseller_reference"
    )
    supplierReference = StrictCharField(
        max_length=MAX_ID, required=False, source="supplier_reference"
    )
    localDate = Day(required=False, source="local_date")
    localDateStart = Day(required=False, source="local_date_start")
    localDateEnd = Day(required=False, source="local_date_end")


class WebhookIn(drf.Serializer):
    url = StrictCharField(max_length=MAX_WEBHOOK_URL)
    event = StrictCharField(max_length=MAX_ID)
