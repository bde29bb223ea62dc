"""OCTO bookings: each is an order on the partner's account, placed, held, confirmed, extended
and cancelled through the sale's own services (orders.services), so its places, locks, limits,
audit records and webhooks are every other order's. The booking keeps what OCTO adds: the
reseller's uuid (the idempotency key: the same uuid answers the same booking), references,
notes, contact and unit items."""

import uuid as uuid_module
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from museum.exceptions import MuseumProblem
from octo import catalogue, offers
from octo.exceptions import (
    BadRequest,
    InvalidAvailability,
    InvalidBooking,
    OctoError,
    Unprocessable,
)
from octo.models import Booking, PartnerTerms
from orders.exceptions import HoldExpired
from orders.models import Order, OrderStatus
from orders.services.cancellation import cancel_order
from orders.services.changes import change_contact
from orders.services.holds import confirm_order, extend_hold
from orders.services.sale import place_order


@contextmanager
def _as_octo() -> Iterator[None]:
    """The sale's refusals (sold out, past the cut-off, over a limit...) as OCTO says them."""
    try:
        yield
    except OctoError:
        raise
    except MuseumProblem as problem:
        if problem.kind == "unavailable":
            raise  # not a refusal: ask again (octo/views.py answers 503)
        raise Unprocessable(str(problem.detail)) from None


def hold_minutes(asked: int | None) -> int:
    """OCTO's expirationMinutes, capped by MUSEUM_OCTO_MAX_HOLD_MINUTES."""
    if asked is None:
        return settings.MUSEUM_HOLD_MINUTES
    return min(asked, settings.MUSEUM_OCTO_MAX_HOLD_MINUTES)


def latest_hold(booking: Booking) -> datetime:
    """The latest a booking's places stay held unpaid: MUSEUM_OCTO_MAX_HOLD_MINUTES from its
    reservation, however often it is extended or rebooked."""
    return booking.created_at + timedelta(minutes=settings.MUSEUM_OCTO_MAX_HOLD_MINUTES)


def commission_of(partner) -> Decimal:
    terms = PartnerTerms.objects.filter(account=partner).first()
    return terms.commission_percent if terms else Decimal("0")


def museum_sends_tickets(partner) -> bool:
    """Whether the museum mails the partner's customers (PartnerTerms; off without terms)."""
    return PartnerTerms.objects.filter(account=partner, museum_sends_tickets=True).exists()


def _contact_fields(contact: dict) -> dict:
    """The order's contact fields of OCTO's contact (read by serializers.ContactIn)."""
    name = contact.get("fullName") or " ".join(
        part for part in (contact.get("firstName"), contact.get("lastName")) if part
    )
    return {
        "email": contact.get("emailAddress") or "",
        "name": name[:100],
        "phone": contact.get("phoneNumber") or "",
    }


def _unit_items(items: list[dict]) -> list[dict]:
    """The asked unit items (read by serializers.UnitItemIn), checked: each names a unit on
    sale."""
    if not items:
        raise Unprocessable("unitItems must list at least one unit.")
    checked = []
    for item in items:
        catalogue.category_for_unit(item["unitId"])
        checked.append(
            {
                "uuid": str(item.get("uuid") or uuid_module.uuid4()),
                "unitId": item["unitId"],
                "resellerReference": item.get("resellerReference"),
            }
        )
    return checked


def _lines(items: Sequence[dict]) -> list[dict]:
    """The order's lines: per unit (category), in the order the items first name them."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item["unitId"]] = counts.get(item["unitId"], 0) + 1
    return [{"category": unit, "quantity": quantity} for unit, quantity in counts.items()]


def _tie_tickets(items: list[dict], order: Order) -> list[dict]:
    """Each unit item gets its ticket: the sale makes them line by line, in the lines' order."""
    by_unit: dict[str, list] = {}
    for ticket in order.sold_tickets:
        assert ticket.category is not None
        by_unit.setdefault(ticket.category.category, []).append(ticket.pk)
    return [{**item, "ticketId": str(by_unit[item["unitId"]].pop(0))} for item in items]


def _place(
    *,
    partner,
    item: catalogue.Product,
    slot: catalogue.Slot,
    items: list[dict],
    hold: bool,
    until: datetime | None,
    contact: dict,
    language: str,
    offer_code: str = "",
) -> Order:
    """The booking's order, through the sale; with `offer_code` (octo/offers), its voucher's,
    sold through the OCTO channel."""
    fields = _contact_fields(contact)
    with _as_octo(), offers.refusals(offer_code):
        return place_order(
            buyer=partner,
            email=fields["email"],
            phone=fields["phone"],
            name=fields["name"],
            ticket_type=item.ticket_type,
            ticket_date=slot.date,
            lines=_lines(items),
            event_id=item.event_id,
            entry_time=slot.entry_time,
            hold=hold,
            hold_until=until,
            language=language,
            # Kept on the order: its confirmation, changes and cancellation mail by it.
            mail_buyer=museum_sends_tickets(partner),
            voucher=offer_code or None,
            octo=True,
        )


def _slot(item: catalogue.Product, availability_id: str) -> catalogue.Slot:
    slot = catalogue.availability_named(item, availability_id)
    if slot is None:
        raise InvalidAvailability(availabilityId=availability_id)
    return slot


def reserve_booking(
    *,
    partner,
    product_id: str,
    option_id: str,
    availability_id: str,
    unit_items: list[dict],
    uuid: uuid_module.UUID | None = None,
    expiration_minutes: int | None = None,
    notes: str = "",
    reseller_reference: str = "",
    contact: dict | None = None,
    language: str = "",
    offer_code: str = "",
) -> Booking:
    """Hold the places of a new booking; the same uuid again from the same partner answers the
    booking it made (one the reseller does not name gets a new one). Uuids are each partner's
    own: another partner's booking of the same uuid is neither found nor in the way."""
    name = str(uuid or uuid_module.uuid4())  # OCTO's uuid is optional: then ours names it
    existing = Booking.objects.filter(partner=partner, uuid=name).first()
    if existing is not None:
        return existing
    item = catalogue.product(product_id)
    catalogue.check_option(option_id)
    items = _unit_items(unit_items)
    slot = _slot(item, availability_id)
    until = timezone.now() + timedelta(minutes=hold_minutes(expiration_minutes))
    offer_code = offers.code_of(offer_code)
    try:
        with transaction.atomic():
            order = _place(
                partner=partner,
                item=item,
                slot=slot,
                items=items,
                hold=True,
                until=until,
                contact=contact or {},
                language=language,
                offer_code=offer_code,
            )
            return Booking.objects.create(
                uuid=name,
                partner=partner,
                order=order,
                product_id=item.id,
                availability_id=slot.id,
                reseller_reference=reseller_reference,
                notes=notes,
                contact=contact or {},
                unit_items=_tie_tickets(items, order),
                offer_code=offer_code,
            )
    except IntegrityError:
        # The same uuid reserved at the same moment: that one stands, and this answers it.
        existing = Booking.objects.filter(uuid=name, partner=partner).first()
        if existing is None:
            raise
        return existing


def _uuid_named(uuid: str) -> str:
    """A uuid as bookings keep it: a UUID's canonical spelling (older bookings' uuids, from
    before a uuid had to be one, as they are)."""
    try:
        return str(uuid_module.UUID(uuid))
    except ValueError:
        return uuid


def booking_of(*, partner, uuid: str, lock: bool = False) -> Booking:
    """The partner's booking of that uuid (INVALID_BOOKING_UUID if none); `lock`: its row locked
    for the caller's transaction, so two changes of one booking (two confirmations after its
    hold ran out, each placing an order) run one after the other."""
    mine = Booking.objects.filter(uuid=_uuid_named(uuid), partner=partner)
    if lock:
        # Locked alone, then read anew: a locking read joined to the order would, after waiting
        # for a change that moved the booking to a new order, join that order as its snapshot
        # saw it (not yet there) and find nothing.
        list(mine.select_for_update().values_list("pk", flat=True))
    booking = mine.select_related("order", "order__slot", "order__event").first()
    if booking is None:
        raise InvalidBooking(uuid=str(uuid))
    return booking


def _replace_order(
    booking: Booking,
    items: list[dict],
    *,
    partner,
    availability_id: str | None = None,
    product_id: str | None = None,
    offer_code: str | None = None,
) -> None:
    """New unit items, availability, product or offer code (empty: none; None: the booking's)
    for a held booking: its order cancelled and placed anew, in one transaction (the old places
    and voucher uses kept if the new ones cannot be had), held until the old hold would have run
    out: a rebooking is no way to hold longer."""
    code = booking.offer_code if offer_code is None else offer_code
    item = catalogue.product(product_id or booking.product_id)
    slot = _slot(item, availability_id or booking.availability_id)
    with transaction.atomic():
        with _as_octo():
            cancel_order(order_id=booking.order_id, by=partner)
        order = _place(
            partner=partner,
            item=item,
            slot=slot,
            items=items,
            hold=True,
            until=booking.order.hold_expires_at,
            contact=booking.contact,
            language=booking.order.language,
            offer_code=code,
        )
        booking.order = order
        booking.product_id = item.id
        booking.availability_id = slot.id
        booking.unit_items = _tie_tickets(items, order)
        booking.offer_code = code
        booking.save(
            update_fields=[
                "order",
                "product_id",
                "availability_id",
                "unit_items",
                "offer_code",
                "updated_at",
            ]
        )


def _keep_contact(booking: Booking, contact: dict, *, partner) -> None:
    """OCTO's update of a contact: the fields named replace the booking's, a field sent as null
    is removed, the others stay; the order's contact follows through the sale's own change."""
    merged = {**booking.contact, **contact}
    merged = {field: value for field, value in merged.items() if value is not None}
    if merged == booking.contact:
        return  # the contact it has (a confirmation repeating the reservation's): no change
    booking.contact = merged
    with _as_octo():
        change_contact(order_id=booking.order_id, by=partner, **_contact_fields(booking.contact))


def confirm_booking(
    *,
    partner,
    uuid,
    contact=None,
    reseller_reference=None,
    unit_items=None,
    notes=None,
    offer_code=None,
) -> Booking:
    """Confirm a held booking: paid on account, its tickets valid. Once the hold ran out its
    places are taken again if free (UNPROCESSABLE_ENTITY if not). Other units or another
    `offer_code` (octo/offers; empty: none) place its order anew first."""
    with transaction.atomic():
        booking = booking_of(partner=partner, uuid=uuid, lock=True)
        _confirm(
            booking,
            partner=partner,
            contact=contact,
            reseller_reference=reseller_reference,
            unit_items=unit_items,
            notes=notes,
            offer_code=_new_offer(booking, offer_code),
        )
    return booking_of(partner=partner, uuid=uuid)


def _new_offer(booking: Booking, offer_code: str | None) -> str | None:
    """The offer code asked, as kept, if it is not the booking's own; else None (no change)."""
    if offer_code is None:
        return None
    code = offers.code_of(offer_code)
    return None if code == booking.offer_code else code


def _confirm(
    booking: Booking, *, partner, contact, reseller_reference, unit_items, notes, offer_code
):
    if booking.order.status == OrderStatus.CANCELLED:
        raise Unprocessable("The booking is cancelled.")
    if booking.order.status == OrderStatus.CONFIRMED:
        return
    items = booking.unit_items if unit_items is None else _unit_items(unit_items)
    other_units = [i["unitId"] for i in items] != [i["unitId"] for i in booking.unit_items]
    if other_units or offer_code is not None:
        _replace_order(booking, items, partner=partner, offer_code=offer_code)
    _update_fields(
        booking,
        partner=partner,
        contact=contact,
        notes=notes,
        reseller_reference=reseller_reference,
    )
    with _as_octo():
        try:
            confirm_order(order_id=booking.order_id, by=partner)
        except HoldExpired:  # the sale says so, and has given its places back
            _retake(booking, partner=partner)
    booking.net_total = _net(booking.order.total, partner=partner)
    booking.save(update_fields=["net_total", "updated_at"])


def _retake(booking: Booking, *, partner) -> None:
    """The hold ran out: the same places, confirmed at once, if they are still free."""
    item = catalogue.product(booking.product_id)
    items = [
        {key: value for key, value in unit.items() if key != "ticketId"}
        for unit in booking.unit_items
    ]
    with transaction.atomic():
        slot = _slot(item, booking.availability_id)
        order = _place(
            partner=partner,
            item=item,
            slot=slot,
            items=items,
            hold=False,
            until=None,
            contact=booking.contact,
            language=booking.order.language,
            offer_code=booking.offer_code,
        )
        booking.order = order
        booking.unit_items = _tie_tickets(items, order)
        booking.save(update_fields=["order", "unit_items", "updated_at"])


def _net(total: Decimal, *, partner) -> Decimal:
    net = total - total * commission_of(partner) / 100
    return net.quantize(Decimal("0.01"))


def _update_fields(booking: Booking, *, partner, contact, notes, reseller_reference) -> None:
    if contact is not None:
        _keep_contact(booking, contact, partner=partner)
    if notes is not None:
        booking.notes = notes
    if reseller_reference is not None:
        booking.reseller_reference = reseller_reference
    booking.save(update_fields=["contact", "notes", "reseller_reference", "updated_at"])


def update_booking(
    *,
    partner,
    uuid,
    contact=None,
    notes=None,
    reseller_reference=None,
    unit_items=None,
    availability_id=None,
    product_id=None,
    option_id=None,
    offer_code=None,
) -> Booking:
    """PATCH: contact, notes and references; unit items, availability, product and offer code
    (octo/offers; empty: none) while on hold, a rebooking."""
    with transaction.atomic():
        booking = booking_of(partner=partner, uuid=uuid, lock=True)
        offer_code = _new_offer(booking, offer_code)
        # Ids checked before the booking's state: a wrong one is wrong whatever the booking.
        if option_id is not None:
            catalogue.check_option(option_id)
        if product_id == booking.product_id:
            product_id = None  # its own product (an event since called off too): no change
        elif product_id is not None:
            product_id = catalogue.product(product_id).id  # INVALID_PRODUCT_ID if unknown
            if product_id == booking.product_id:
                product_id = None  # its own, spelt otherwise (an upper-case uuid)
        rebooked = (unit_items, availability_id, product_id, offer_code)
        if any(asked is not None for asked in rebooked):
            order = booking.order
            if order.status != OrderStatus.HELD or order.hold_ran_out(timezone.now()):
                raise Unprocessable(
                    "Units, availability, product and offer change only while on hold."
                )
            items = booking.unit_items if unit_items is None else _unit_items(unit_items)
            _replace_order(
                booking,
                items,
                partner=partner,
                availability_id=availability_id,
                product_id=product_id,
                offer_code=offer_code,
            )
        _update_fields(
            booking,
            partner=partner,
            contact=contact,
            notes=notes,
            reseller_reference=reseller_reference,
        )
    return booking_of(partner=partner, uuid=uuid)


def extend_booking(*, partner, uuid: str, expiration_minutes: int | None = None) -> Booking:
    booking = booking_of(partner=partner, uuid=uuid)
    with _as_octo():
        extend_hold(
            order_id=booking.order_id,
            by=partner,
            minutes=hold_minutes(expiration_minutes),
            latest=latest_hold(booking),
        )
    return booking_of(partner=partner, uuid=uuid)


def cancel_booking(*, partner, uuid: str, reason: str = "") -> Booking:
    """Cancel a booking, held or confirmed, until the cut-off (UNPROCESSABLE_ENTITY after);
    a booking already cancelled is answered as it is."""
    with transaction.atomic():
        booking = booking_of(partner=partner, uuid=uuid, lock=True)
        if booking.order.status in (OrderStatus.CANCELLED, OrderStatus.EXPIRED):
            return booking
        with _as_octo():
            cancel_order(order_id=booking.order_id, by=partner)
        booking.cancellation_reason = reason
        booking.save(update_fields=["cancellation_reason", "updated_at"])
    return booking_of(partner=partner, uuid=uuid)


def find_bookings(
    *,
    partner,
    reseller_reference: str = "",
    supplier_reference: str = "",
    local_date: date | None = None,
    local_date_start: date | None = None,
    local_date_end: date | None = None,
) -> list[Booking]:
    bookings = Booking.objects.select_related("order", "order__slot", "order__event").filter(
        partner=partner
    )
    if not any((reseller_reference, supplier_reference, local_date, local_date_start)):
        raise BadRequest(
            "Name resellerReference, supplierReference, localDate or localDateStart/End."
        )
    if reseller_reference:
        bookings = bookings.filter(reseller_reference=reseller_reference)
    if supplier_reference:
        bookings = bookings.filter(order__confirmation_code=supplier_reference)
    if local_date:
        bookings = bookings.filter(order__date=local_date)
    if local_date_start:
        bookings = bookings.filter(order__date__gte=local_date_start)
    if local_date_end:
        bookings = bookings.filter(order__date__lte=local_date_end)
    return list(bookings[:500])
