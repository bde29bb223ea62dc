"""What OCTO shows of the museum: the supplier, its products (general entry, and one per special
event), and their availability per day and per slot, read from the rows the sale counts on
(hours.services.slots_on_sale, the event dates), so a reseller sees what a sale would take."""

import uuid
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from events.models import EventDate, SpecialEvent
from events.services import sales_end as event_sales_end
from hours.models import EntrySlot, MuseumDay
from hours.services import sales_end, slots_on_sale
from octo.exceptions import BadRequest, InvalidOption, InvalidProduct, InvalidUnit
from octo.models import CategoryUnit, UnitType
from orders.models import TicketType, VisitorCategory
from orders.selectors import RunOutHolds, run_out_holds
from orders.services.pricing import active_categories, category_price

GENERAL = "general"
OPTION = "DEFAULT"
MAX_RANGE_DAYS = 366
# The days whose moments every zone can write: a local midnight on the calendar's first or last
# day lies outside Python's datetimes once moved to UTC or a day on.
FIRST_DAY = date.min + timedelta(days=2)
LAST_DAY = date.max - timedelta(days=2)
# LIMITED: fewer places left than this share of the capacity.
LIMITED_BELOW = Decimal("0.5")
# The visitor categories OCTO's unit types are guessed from until staff map them.
GUESSED_TYPES = {member.value.lower(): member.value for member in UnitType}


@dataclass(frozen=True)
class Product:
    """General entry (`event` None) or one special event."""

    id: str
    event: SpecialEvent | None

    @property
    def ticket_type(self) -> str:
        return TicketType.GENERAL if self.event is None else TicketType.EVENT

    @property
    def event_id(self) -> uuid.UUID | None:
        return None if self.event is None else self.event.pk


@dataclass
class Slot:
    """One availability: a slot, an untimed open day, or an event's date."""

    id: str
    date: date
    start: datetime
    end: datetime
    cutoff: datetime
    all_day: bool
    vacancies: int | None
    capacity: int | None
    opening_hours: list[dict]
    entry_time: time | None = None

    @property
    def closed(self) -> bool:
        """Its sale ended: past its cut-off (OCTO's CLOSED, not SOLD_OUT)."""
        return timezone.now() >= self.cutoff

    @property
    def status(self) -> str:
        if self.closed:
            return "CLOSED"
        if self.vacancies == 0:
            return "SOLD_OUT"
        if (
            self.vacancies is not None
            and self.capacity
            and self.vacancies < (self.capacity * LIMITED_BELOW)
        ):
            return "LIMITED"
        return "AVAILABLE"


def local(day: date, at: time) -> datetime:
    return timezone.make_aware(datetime.combine(day, at))


def availability_id(moment: datetime) -> str:
    """OCTO's availability id: the local start, ISO 8601 with the zone's offset."""
    return timezone.localtime(moment).isoformat()


def product(product_id, *, called_off_too: bool = False) -> Product:
    """The product of that id (INVALID_PRODUCT_ID if none); an event called off only
    `called_off_too` (a booking still names it)."""
    if product_id == GENERAL:
        return Product(GENERAL, None)
    try:
        event_id = uuid.UUID(str(product_id))
    except ValueError:
        raise InvalidProduct(productId=product_id) from None
    events = SpecialEvent.objects.all() if called_off_too else SpecialEvent.objects.active()
    event = events.filter(pk=event_id).first()
    if event is None:
        raise InvalidProduct(productId=product_id)
    return Product(str(event.pk), event)


def products() -> list[Product]:
    return [Product(GENERAL, None)] + [
        Product(str(event.pk), event)
        for event in SpecialEvent.objects.active()
        .filter(dates__date__gte=timezone.localdate())
        .distinct()
        .order_by("name")
    ]


def check_option(option_id) -> None:
    if option_id != OPTION:
        raise InvalidOption(optionId=option_id)


def has_slots(item: Product) -> bool:
    return item.event is None and (
        EntrySlot.objects.filter(day__date__gte=timezone.localdate()).exists()
    )


def start_times(item: Product) -> list[str]:
    """The local start times its availabilities have (OCTO's availabilityLocalStartTimes): an
    event's dates start at midnight; untimed entry (OPENING_HOURS) has none."""
    if item.event is not None:
        return ["00:00"]
    if not has_slots(item):
        return []
    times = (
        EntrySlot.objects.filter(day__date__gte=timezone.localdate())
        .values_list("entry_time", flat=True)
        .distinct()
        .order_by("entry_time")
    )
    return [f"{entry:%H:%M}" for entry in times]


def units() -> list[tuple[VisitorCategory, CategoryUnit]]:
    """The categories on sale, each with its unit type and ages (staff's, else guessed)."""
    categories = list(active_categories().select_related("octo_unit"))
    found = []
    for category in categories:
        unit = getattr(category, "octo_unit", None)
        if unit is None:
            unit = CategoryUnit(
                category=category,
                unit_type=GUESSED_TYPES.get(category.category.lower(), UnitType.OTHER),
            )
        found.append((category, unit))
    return found


def category_for_unit(unit_id) -> VisitorCategory:
    category = active_categories().filter(category=unit_id).first()
    if category is None:
        raise InvalidUnit(unitId=unit_id)
    return category


def minor(amount: Decimal) -> int:
    """An amount in the currency's minor units (cents)."""
    return int((amount * 100).to_integral_value(rounding=ROUND_HALF_UP))


def pricing(retail: Decimal, *, commission: Decimal, original: Decimal | None = None) -> dict:
    """OCTO's pricing of a retail price: net is what the museum gets after the commission;
    `original` the price before a voucher's discount (by default the retail price)."""
    net = retail - (retail * commission / 100)
    return {
        "original": minor(retail if original is None else original),
        "retail": minor(retail),
        "net": minor(net),
        "currency": settings.MUSEUM_CURRENCY,
        "currencyPrecision": 2,
        "includedTaxes": [],
    }


def unit_price(category: VisitorCategory, item: Product) -> Decimal:
    return category_price(category=category, event=item.event)


def check_range(first: date, last: date) -> None:
    if last < first or (last - first).days > MAX_RANGE_DAYS:
        raise BadRequest("The range must run forwards over at most a year.")


def parse_availability_id(value: str) -> datetime | None:
    """The moment an availability id names, in the museum's zone; None for text that is not
    one, or a moment at the calendar's edge (which no availability has)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if timezone.is_naive(moment) or not FIRST_DAY <= moment.date() <= LAST_DAY:
        return None
    return timezone.localtime(moment)


def availabilities(item: Product, *, first: date, last: date) -> list[Slot]:
    """The product's availabilities from `first` to `last`, today's and later. A read writes
    nothing: the places of holds that ran out count as free (the job gives them back)."""
    first = max(first, timezone.localdate())
    if last < first:
        return []
    run_out = run_out_holds(first=first, last=last)
    if item.event is not None:
        return _event_dates(item.event, first=first, last=last, run_out=run_out)
    days = MuseumDay.objects.filter(date__gte=first, date__lte=last, is_closed=False)
    found: list[Slot] = []
    for day in days.order_by("date").prefetch_related("slots"):
        found.extend(_day(day, run_out=run_out))
    return found


def _hours(day: MuseumDay) -> list[dict]:
    return [{"from": f"{day.opens_at:%H:%M}", "to": f"{day.closes_at:%H:%M}"}]


def _day(day: MuseumDay, *, run_out: RunOutHolds) -> list[Slot]:
    assert day.opens_at is not None and day.closes_at is not None
    hours = _hours(day)
    read = sorted(day.slots.all(), key=lambda slot: slot.entry_time)  # prefetched
    run_out.free_day(day, read)
    slots = slots_on_sale(day=day, slots=read)
    if not slots:
        end = sales_end(day=day, entry_time=None, entry_times=[])
        left = None if day.capacity is None else max(day.capacity - day.sold, 0)
        over = timezone.now() >= end
        # OCTO's OPENING_HOURS: the day from midnight, its hours in openingHours.
        start = local(day.date, time.min)
        return [
            Slot(
                id=availability_id(start),
                date=day.date,
                start=start,
                end=start + timedelta(days=1),
                cutoff=end,
                all_day=True,
                vacancies=0 if over else left,
                capacity=day.capacity,
                opening_hours=hours,
            )
        ]
    times = [slot.entry_time for slot in slots]
    found = []
    for slot in slots:
        start = local(day.date, slot.entry_time)
        end = sales_end(day=day, entry_time=slot.entry_time, entry_times=times)
        found.append(
            Slot(
                id=availability_id(start),
                date=day.date,
                start=start,
                end=end,
                cutoff=end,
                all_day=False,
                vacancies=slot.available,
                capacity=slot.capacity if slot.capacity is not None else day.capacity,
                opening_hours=hours,
                entry_time=slot.entry_time,
            )
        )
    return found


def _event_dates(
    event: SpecialEvent, *, first: date, last: date, run_out: RunOutHolds
) -> list[Slot]:
    dates = EventDate.objects.filter(event=event, date__gte=first, date__lte=last).order_by("date")
    days = {
        day.date: day
        for day in MuseumDay.objects.filter(date__gte=first, date__lte=last, is_closed=False)
    }
    found = []
    now = timezone.now()
    for event_date in dates:
        run_out.free_event_date(event_date)
        day = days.get(event_date.date)
        start = local(event_date.date, time.min)
        end = start + timedelta(days=1)
        # The sale's own cut-off (orders.services.places.refuse_if_event_sale_ended).
        cutoff = event_sales_end(event=event, on=event_date.date, day=day)
        left = (
            None if event_date.capacity is None else max(event_date.capacity - event_date.sold, 0)
        )
        found.append(
            Slot(
                id=availability_id(start),
                date=event_date.date,
                start=start,
                end=end,
                cutoff=cutoff,
                all_day=True,
                vacancies=0 if now >= cutoff else left,
                capacity=event_date.capacity,
                opening_hours=_hours(day) if day is not None else [],
            )
        )
    return found


def availability_named(item: Product, availability: str) -> Slot | None:
    """The product's availability of that id, if it is on sale."""
    moment = parse_availability_id(availability)
    if moment is None:
        return None
    for slot in availabilities(item, first=moment.date(), last=moment.date()):
        if slot.start == moment or slot.id == availability_id(moment):
            return slot
    return None


def title(item: Product) -> str:
    return _("General entry") if item.event is None else item.event.name
