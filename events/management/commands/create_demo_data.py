from datetime import date, timedelta
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone

from events.models import SpecialEvent
from events.services import create_event, sales_end
from hours.models import EntrySlot, MuseumDay
from hours.services import add_entry_slots
from orders.models import MembershipType, TicketType
from orders.providers import DESK
from orders.services.payments import start_payment
from orders.services.sale import buy_ticket, place_order

DEMO_VISITOR = "visitor"  # made by create_demo_accounts
DEMO_STAFF = "staff"
DEMO_EMAIL = "visitor@example.com"
# The demo visitor's family order, on the first timed day.
DEMO_FAMILY = [{"category": "adult", "quantity": 2}, {"category": "child", "quantity": 2}]
DEMO_SLOT_MINUTES, DEMO_SLOT_CAPACITY = 30, 40

# Kept for members in each demo slot from 10:00 to 12:00 (until the cut-off before the slot).
DEMO_MEMBER_PLACES = 6
# (code, price, admits, discount on events (%), names and descriptions by language)
DEMO_MEMBERSHIP_TYPES = [
    (
        "individual",
        "60.00",
        1,
        10,
        {
            "en": ("Individual", "A year of free visits for one, and 10 % off special events."),
            "de": ("Einzelperson", "Ein Jahr freier Eintritt für eine Person, 10 % auf Events."),
            "fr": ("Individuel", "Un an d'entrées libres pour une personne, -10 % aux événements."),
            "nl": ("Individueel", "Een jaar gratis toegang voor één, 10 % korting op evenementen."),
            "es": ("Individual", "Un año de visitas gratis para una persona y 10 % en eventos."),
        },
    ),
    (
        "dual",
        "95.00",
        2,
        10,
        {
            "en": ("Dual", "A year of free visits for two adults, and 10 % off special events."),
            "de": ("Zwei Personen", "Ein Jahr freier Eintritt für zwei, 10 % auf Events."),
            "fr": ("Duo", "Un an d'entrées libres pour deux adultes, -10 % aux événements."),
            "nl": ("Duo", "Een jaar gratis toegang voor twee, 10 % korting op evenementen."),
            "es": ("Dúo", "Un año de visitas gratis para dos adultos y 10 % en eventos."),
        },
    ),
    (
        "family",
        "120.00",
        6,
        15,
        {
            "en": ("Family", "Two adults and up to four children, a year, 15 % off events."),
            "de": ("Familie", "Zwei Erwachsene und bis zu vier Kinder, ein Jahr, 15 % auf Events."),
            "fr": (
                "Famille",
                "Deux adultes et jusqu'à quatre enfants, un an, -15 % aux événements.",
            ),
            "nl": ("Gezin", "Twee volwassenen en tot vier kinderen, een jaar, 15 % korting."),
            "es": ("Familia", "Dos adultos y hasta cuatro niños, un año, 15 % en eventos."),
        },
    ),
]

# (name, location, description, price, places per date, days from today)
DEMO_EVENTS = [
    (
        "Late Opening: Night at the Museum",
        "Great Hall",
        "The galleries after dark, with music and short tours by torchlight.",
        "12.00",
        120,
        [0, 7, 14, 21],
    ),
    (
        "Pirate Coding Workshop",
        "Education Room",
        "Children aged 8 to 12 program a treasure map; laptops provided.",
        "45.00",
        20,
        [3, 10],
    ),
    (
        "Behind the Scenes: Conservation Studio",
        "Conservation Studio",
        "Our conservators show how a 17th-century panel painting is cleaned.",
        "25.00",
        12,
        [5],
    ),
    (
        "Family Drawing Morning",
        "Gallery 2",
        "Pencils, paper and a favourite painting: drawing for all ages.",
        "5.00",
        30,
        [6, 13, 20, 27],
    ),
    (
        "Curator's Talk: Painting Light",
        "Auditorium",
        "How painters caught the light of the low countries, with the curator.",
        "8.00",
        80,
        [18],
    ),
]


class Command(BaseCommand):
    help = (
        "Fill an empty museum with demo events over the coming month, a few tickets for the "
        "demo visitor, membership types, and timed entry on the first open day two days away "
        "with places kept for members and the visitor's family order in one of its slots. Does "
        "nothing when any event exists. Run after "
        "seed_hours and create_demo_accounts; never against a production database."
    )

    def handle(self, *args, **options):
        if SpecialEvent.objects.exists():
            self.stdout.write("Events exist; no demo data added.")
            return
        visitor = User.objects.filter(username=DEMO_VISITOR).first()
        # The demo visitor pays online; their tickets are paid at the desk by the demo staff.
        self.desk = User.objects.filter(username=DEMO_STAFF).first()
        if visitor is None:
            self.stdout.write(f"No {DEMO_VISITOR!r} account (create_demo_accounts): no tickets.")
        # Demo tickets go to an example.com address: no confirmation mail for them.
        with override_settings(EMAIL_BACKEND="django.core.mail.backends.dummy.EmailBackend"):
            with transaction.atomic():
                events = self._create_events()
                kinds = self._membership_types()
                self._groups()
                codes = []
                if visitor is not None:
                    codes = self._buy_tickets(events, visitor) + self._timed_day(visitor)
        self.stdout.write(
            self.style.SUCCESS(f"Demo data: {len(events)} events, {kinds} membership types.")
        )
        for code in codes:
            self.stdout.write(f"  demo ticket: {code}")

    def _create_events(self) -> list[SpecialEvent]:
        today = timezone.localdate()
        return [
            create_event(
                name=name,
                location=location,
                description=description,
                price=Decimal(price),
                capacity=capacity,
                dates=[today + timedelta(days=offset) for offset in offsets],
            )
            for name, location, description, price, capacity, offsets in DEMO_EVENTS
        ]

    def _groups(self) -> None:
        """What groups need: pupils and teachers (1 teacher free per 10 pupils), a guided tour
        in English and German for schools, a guide working weekdays, and a school's request
        waiting at the desk."""
        from datetime import time

        from groups.models import ChaperoneRule, Guide, TourProgramme
        from groups.services.requests import request_group
        from orders.models import VisitorCategory

        pupil, _ = VisitorCategory.objects.get_or_create(
            category="pupil",
            defaults={"name": "Pupil", "plural_name": "Pupils", "general_price": Decimal("5")},
        )
        teacher, _ = VisitorCategory.objects.get_or_create(
            category="teacher",
            defaults={"name": "Teacher", "plural_name": "Teachers", "general_price": Decimal("12")},
        )
        ChaperoneRule.objects.get_or_create(
            pupil_category=pupil, defaults={"name": "School classes", "adult_category": teacher}
        )
        tour, _ = TourProgramme.objects.get_or_create(
            name="Highlights for schools",
            defaults={
                "duration_minutes": 60,
                "languages": ["en", "de"],
                "audiences": ["school"],
                "max_people_per_guide": 25,
                "fee": Decimal("60"),
                "fee_per": "guide",
            },
        )
        guide, _ = Guide.objects.get_or_create(
            email="guide@example.com",
            defaults={"name": "Demo Guide", "languages": ["en", "de"], "audiences": ["school"]},
        )
        for weekday in range(5):
            guide.availability.get_or_create(weekday=weekday, starts=time(9), ends=time(17))
        day = MuseumDay.objects.filter(
            date__gte=timezone.localdate() + timedelta(days=21), is_closed=False
        ).first()
        if day is None:
            return
        slot = EntrySlot.objects.filter(day=day).order_by("entry_time").first()
        request_group(
            account=None,
            organisation="Demo Primary School",
            organisation_kind="school",
            contact_name="Demo Teacher",
            email=DEMO_EMAIL,
            date=day.date,
            entry_time=slot.entry_time if slot else None,
            lines={"pupil": 24, "teacher": 2},
            language="en",
            tour_id=tour.pk,
        )

    def _membership_types(self) -> int:
        """The demo's types, named in every shipped language; a type the museum made is kept."""
        for ordering, (code, price, admits, discount, texts) in enumerate(DEMO_MEMBERSHIP_TYPES):
            MembershipType.objects.get_or_create(
                code=code,
                defaults={
                    "price": Decimal(price),
                    "admits": admits,
                    "event_discount_percent": discount,
                    "ordering": ordering,
                    **{f"name_{language}": name for language, (name, _) in texts.items()},
                    **{f"description_{language}": text for language, (_, text) in texts.items()},
                },
            )
        return len(DEMO_MEMBERSHIP_TYPES)

    def _buy_tickets(self, events: list[SpecialEvent], visitor: User) -> list[str]:
        """Tickets for the demo visitor, bought as the API buys them, described for the desk."""
        today = timezone.localdate()
        late_opening, workshop = events[0], events[1]
        purchases: list[tuple[TicketType, SpecialEvent | None, date]] = [
            (TicketType.EVENT, late_opening, self._first_on_sale(late_opening)),
            (TicketType.EVENT, workshop, workshop.dates.values_list("date", flat=True)[0]),
        ]
        # From tomorrow: today's general entry is no longer sold once the museum closes.
        open_days = MuseumDay.objects.filter(date__gt=today, is_closed=False)[:2]
        if not open_days:
            self.stdout.write("No open days (seed_hours): no general-entry tickets.")
        purchases += [(TicketType.GENERAL, None, day.date) for day in open_days]
        codes = []
        for ticket_type, event, day in purchases:
            ticket = buy_ticket(
                buyer=visitor,
                ticket_type=ticket_type,
                ticket_date=day,
                email=DEMO_EMAIL,
                event_id=event.pk if event else None,
            )
            self._pay_at_desk(ticket.order_id)
            what = event.name if event else "general entry"
            codes.append(f"{ticket.confirmation_code} ({what}, {day:%a %d %b})")
        return codes

    @staticmethod
    def _first_on_sale(event: SpecialEvent) -> date:
        """Today, something to scan at the door, unless today's sale has ended (the museum has
        closed): then its next date."""
        now = timezone.now()
        dates = list(event.dates.order_by("date").values_list("date", flat=True))
        days = MuseumDay.objects.in_bulk(dates)
        return next(
            (on for on in dates if now < sales_end(event=event, on=on, day=days.get(on))),
            dates[-1],
        )

    def _timed_day(self, visitor: User) -> list[str]:
        """Entry slots on the first open day two days away or more (so the family may still
        cancel), those of the morning keeping places for members, and the demo visitor's family
        order in its 10:30 slot, or its first."""
        today = timezone.localdate()
        day = (
            MuseumDay.objects.filter(date__gte=today + timedelta(days=2), is_closed=False)
            .order_by("date")
            .first()
        )
        if day is None:
            return []
        add_entry_slots(
            start=day.date,
            end=day.date + timedelta(days=1),
            minutes=DEMO_SLOT_MINUTES,
            capacity=DEMO_SLOT_CAPACITY,
        )
        slots = EntrySlot.objects.filter(day=day).order_by("entry_time")
        morning = slots.filter(entry_time__gte="10:00", entry_time__lte="12:00")
        if kept := morning.update(member_places=DEMO_MEMBER_PLACES):
            self.stdout.write(f"  {DEMO_MEMBER_PLACES} places kept for members in {kept} slots")
        slot = slots.filter(entry_time__gte="10:30").first() or slots.first()
        if slot is None:
            return []
        order = place_order(
            buyer=visitor,
            email=DEMO_EMAIL,
            ticket_type=TicketType.GENERAL,
            ticket_date=day.date,
            lines=DEMO_FAMILY,
            entry_time=slot.entry_time,
        )
        self._pay_at_desk(order.pk)
        when = f"{day.date:%a %d %b} {slot.entry_time:%H:%M}"
        family = ", ".join(f"{line['quantity']} {line['category']}" for line in DEMO_FAMILY)
        codes = [f"{order.confirmation_code} (family order: {family}, {when})"]
        for ticket in order.sold_tickets:
            assert ticket.category is not None  # an order's tickets have a category
            codes.append(f"{ticket.confirmation_code} ({ticket.category.name}, {when})")
        return codes

    def _pay_at_desk(self, order_id) -> None:
        if self.desk is not None:
            start_payment(order_id=order_id, by=self.desk, provider_name=DESK, method="card")
